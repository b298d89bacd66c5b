//! Process information on Windows: the start time (`GetProcessTimes`), the parent (a Toolhelp
//! snapshot), the executable (`QueryFullProcessImageNameW`) and the command line
//! (`NtQueryInformationProcess(ProcessCommandLineInformation)`, Windows 8.1 and later; where
//! that class is unknown, as in Wine, read from the process's PEB).

use std::os::windows::ffi::OsStringExt;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use std::path::PathBuf;

use windows_sys::Wdk::System::Threading::{
    NtQueryInformationProcess, ProcessBasicInformation, ProcessCommandLineInformation,
};
use windows_sys::Win32::Foundation::{FILETIME, INVALID_HANDLE_VALUE, UNICODE_STRING};
use windows_sys::Win32::System::Diagnostics::Debug::ReadProcessMemory;
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, Process32FirstW, Process32NextW, PROCESSENTRY32W, TH32CS_SNAPPROCESS,
};
use windows_sys::Win32::System::Threading::{
    GetExitCodeProcess, GetProcessTimes, QueryFullProcessImageNameW, PROCESS_BASIC_INFORMATION,
    PROCESS_QUERY_LIMITED_INFORMATION, PROCESS_VM_READ,
};

use super::security::open_process;

/// `STILL_ACTIVE`: the exit code of a process that has not exited.
const STILL_ACTIVE: u32 = 0x103;

/// The longest command line Windows allows, in UTF-16 units (32767), as bytes, plus room for
/// the header: the most the command-line query is given.
const MAX_COMMAND_LINE_BYTES: u32 = 32_768 * 2 + 64;

fn open(pid: i32) -> Option<OwnedHandle> {
    let pid = u32::try_from(pid).ok().filter(|&pid| pid != 0)?;
    open_process(pid, PROCESS_QUERY_LIMITED_INFORMATION).ok()
}

/// When `pid` started, in 100 ns units since 1601; `None` once it has exited (a process
/// object may outlive its process while someone holds a handle to it).
pub(crate) fn start_time(pid: i32) -> Option<u64> {
    let process = open(pid)?;
    let mut exit_code = 0u32;
    // SAFETY: a process handle with query access; out-pointer.
    if unsafe { GetExitCodeProcess(process.as_raw_handle(), &mut exit_code) } == 0
        || exit_code != STILL_ACTIVE
    {
        return None;
    }
    let zero = || FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    let (mut created, mut exited, mut kernel, mut user) = (zero(), zero(), zero(), zero());
    // SAFETY: a process handle with query access; out-pointers.
    if unsafe {
        GetProcessTimes(
            process.as_raw_handle(),
            &mut created,
            &mut exited,
            &mut kernel,
            &mut user,
        )
    } == 0
    {
        return None;
    }
    Some((u64::from(created.dwHighDateTime) << 32) | u64::from(created.dwLowDateTime))
}

/// The parent of `pid`, from a Toolhelp snapshot. Windows keeps the parent's pid after the
/// parent exits, and pids are reused, so a "parent" that started after `pid` is not its
/// parent, and none is reported.
pub(crate) fn parent_pid(pid: i32) -> Option<i32> {
    let wanted = u32::try_from(pid).ok()?;
    // SAFETY: plain call; INVALID_HANDLE_VALUE is the failure.
    let snapshot = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0) };
    if snapshot == INVALID_HANDLE_VALUE {
        return None;
    }
    // SAFETY: a fresh handle we own.
    let snapshot = unsafe { OwnedHandle::from_raw_handle(snapshot) };
    let mut entry = PROCESSENTRY32W {
        dwSize: size_of::<PROCESSENTRY32W>() as u32,
        ..PROCESSENTRY32W::default()
    };
    // SAFETY: a snapshot handle and an entry whose dwSize is set.
    let mut more = unsafe { Process32FirstW(snapshot.as_raw_handle(), &mut entry) } != 0;
    while more {
        if entry.th32ProcessID == wanted {
            let parent = i32::try_from(entry.th32ParentProcessID).ok()?;
            let child_started = start_time(pid)?;
            return start_time(parent)
                .filter(|&parent_started| parent_started <= child_started)
                .map(|_| parent);
        }
        // SAFETY: as above.
        more = unsafe { Process32NextW(snapshot.as_raw_handle(), &mut entry) } != 0;
    }
    None
}

/// The executable of `pid`.
pub(crate) fn executable(pid: i32) -> Option<PathBuf> {
    let process = open(pid)?;
    let mut buffer = vec![0u16; 32_768];
    let mut length = buffer.len() as u32;
    // SAFETY: the buffer holds `length` UTF-16 units.
    if unsafe {
        QueryFullProcessImageNameW(process.as_raw_handle(), 0, buffer.as_mut_ptr(), &mut length)
    } == 0
    {
        return None;
    }
    buffer.truncate(length as usize);
    Some(PathBuf::from(std::ffi::OsString::from_wide(&buffer)))
}

/// The command line of `pid`, split into arguments by the rules the C runtime uses.
pub(crate) fn command_line(pid: i32) -> Vec<String> {
    open(pid)
        .and_then(|process| raw_command_line(&process))
        .or_else(|| peb_command_line(pid))
        .map(|line| split_command_line(&line))
        .unwrap_or_default()
}

/// Where the 64-bit PEB keeps its `ProcessParameters` pointer, and where those parameters
/// keep the `CommandLine` string (winternl.h layouts, stable since Windows XP x64).
const PEB_PROCESS_PARAMETERS_OFFSET: usize = 0x20;
const PARAMETERS_COMMAND_LINE_OFFSET: usize = 0x70;

/// Reads `size_of::<T>()` bytes at `address` of another process.
fn read_remote<T: Copy>(process: &OwnedHandle, address: usize) -> Option<T> {
    let mut value = std::mem::MaybeUninit::<T>::uninit();
    let mut read = 0usize;
    // SAFETY: the buffer holds a T; the system copies at most that many bytes.
    let copied = unsafe {
        ReadProcessMemory(
            process.as_raw_handle(),
            address as *const _,
            value.as_mut_ptr().cast(),
            size_of::<T>(),
            &mut read,
        )
    } != 0;
    // SAFETY: all of T's bytes were copied (T is plain data: integers and pointers).
    (copied && read == size_of::<T>()).then(|| unsafe { value.assume_init() })
}

/// The command line from the PEB of `pid`: `ProcessParameters->CommandLine`.
fn peb_command_line(pid: i32) -> Option<String> {
    if cfg!(not(target_pointer_width = "64")) {
        return None;
    }
    let pid = u32::try_from(pid).ok()?;
    let process = open_process(pid, PROCESS_QUERY_LIMITED_INFORMATION | PROCESS_VM_READ).ok()?;
    let mut basic = PROCESS_BASIC_INFORMATION {
        ExitStatus: 0,
        PebBaseAddress: std::ptr::null_mut(),
        AffinityMask: 0,
        BasePriority: 0,
        UniqueProcessId: 0,
        InheritedFromUniqueProcessId: 0,
    };
    let mut returned = 0u32;
    // SAFETY: the buffer is this information class's structure.
    let status = unsafe {
        NtQueryInformationProcess(
            process.as_raw_handle(),
            ProcessBasicInformation,
            (&mut basic as *mut PROCESS_BASIC_INFORMATION).cast(),
            size_of::<PROCESS_BASIC_INFORMATION>() as u32,
            &mut returned,
        )
    };
    if status < 0 || basic.PebBaseAddress.is_null() {
        return None;
    }
    let peb = basic.PebBaseAddress as usize;
    let parameters: usize = read_remote(&process, peb.checked_add(PEB_PROCESS_PARAMETERS_OFFSET)?)?;
    let line: UNICODE_STRING = read_remote(
        &process,
        parameters.checked_add(PARAMETERS_COMMAND_LINE_OFFSET)?,
    )?;
    let units = usize::from(line.Length) / 2;
    let mut text = vec![0u16; units];
    let mut read = 0usize;
    // SAFETY: the buffer holds `units` UTF-16 units; the system copies at most that many.
    let copied = unsafe {
        ReadProcessMemory(
            process.as_raw_handle(),
            line.Buffer as *const _,
            text.as_mut_ptr().cast(),
            units * 2,
            &mut read,
        )
    } != 0;
    (copied && read == units * 2).then(|| String::from_utf16_lossy(&text))
}

fn raw_command_line(process: &OwnedHandle) -> Option<String> {
    // u64 elements keep the UNICODE_STRING at the start aligned.
    let mut buffer = vec![0u64; (MAX_COMMAND_LINE_BYTES as usize).div_ceil(8)];
    let mut returned = 0u32;
    // SAFETY: the buffer holds MAX_COMMAND_LINE_BYTES bytes.
    let status = unsafe {
        NtQueryInformationProcess(
            process.as_raw_handle(),
            ProcessCommandLineInformation,
            buffer.as_mut_ptr().cast(),
            MAX_COMMAND_LINE_BYTES,
            &mut returned,
        )
    };
    if status < 0 {
        return None;
    }
    // SAFETY: the system wrote a UNICODE_STRING at the start of the buffer.
    let header = unsafe { &*buffer.as_ptr().cast::<UNICODE_STRING>() };
    let start = buffer.as_ptr() as usize;
    let text = header.Buffer as usize;
    let length = usize::from(header.Length);
    let end = (MAX_COMMAND_LINE_BYTES as usize).min(returned as usize);
    // The text must lie inside what the system wrote into our buffer.
    if text < start || text.checked_add(length)? > start + end || !text.is_multiple_of(2) {
        return None;
    }
    // SAFETY: bounds and alignment checked above.
    let units = unsafe { std::slice::from_raw_parts(header.Buffer, length / 2) };
    Some(String::from_utf16_lossy(units))
}

/// Splits a Windows command line as the C runtime does: whitespace separates arguments
/// outside quotes; `2n` backslashes before a quote are `n` backslashes and the quote toggles
/// quoting, `2n + 1` are `n` and a literal quote; other backslashes are literal.
pub(crate) fn split_command_line(line: &str) -> Vec<String> {
    let mut arguments = Vec::new();
    let mut current = String::new();
    let mut in_argument = false;
    let mut quoted = false;
    let mut backslashes = 0usize;
    for character in line.chars() {
        match character {
            '\\' => {
                backslashes += 1;
                in_argument = true;
            }
            '"' => {
                current.extend(std::iter::repeat_n('\\', backslashes / 2));
                if backslashes % 2 == 1 {
                    current.push('"');
                } else {
                    quoted = !quoted;
                }
                backslashes = 0;
                in_argument = true;
            }
            ' ' | '\t' if !quoted => {
                current.extend(std::iter::repeat_n('\\', backslashes));
                backslashes = 0;
                if in_argument {
                    arguments.push(std::mem::take(&mut current));
                    in_argument = false;
                }
            }
            other => {
                current.extend(std::iter::repeat_n('\\', backslashes));
                backslashes = 0;
                current.push(other);
                in_argument = true;
            }
        }
    }
    current.extend(std::iter::repeat_n('\\', backslashes));
    if in_argument {
        arguments.push(current);
    }
    arguments
}

#[cfg(test)]
mod tests {
    use super::split_command_line;

    #[test]
    fn a_command_line_splits_as_the_c_runtime_splits_it() {
        assert_eq!(
            split_command_line(r#"C:\agent.exe --mcp "a b" c\d "e\"f" g\\"h i" """#),
            [
                r"C:\agent.exe",
                "--mcp",
                "a b",
                r"c\d",
                r#"e"f"#,
                r"g\h i",
                ""
            ]
        );
        assert!(split_command_line("   ").is_empty());
    }
}
