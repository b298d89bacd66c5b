//! Windows users and ACLs: the SID a process runs as, and the owner-only, protected DACL that
//! stands for Unix's 0700 and 0600.

use std::ffi::c_void;
use std::fmt;
use std::io;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use std::sync::OnceLock;

use windows_sys::Win32::Foundation::{LocalFree, HANDLE};
use windows_sys::Win32::Security::Authorization::{
    ConvertSecurityDescriptorToStringSecurityDescriptorW, ConvertSidToStringSidW,
    ConvertStringSecurityDescriptorToSecurityDescriptorW, GetSecurityInfo, SetSecurityInfo,
    SDDL_REVISION_1, SE_FILE_OBJECT,
};
use windows_sys::Win32::Security::{
    AclSizeInformation, GetAce, GetAclInformation, GetLengthSid, GetSecurityDescriptorDacl,
    GetSidSubAuthority, GetSidSubAuthorityCount, GetTokenInformation, IsValidSid, TokenUser,
    ACCESS_ALLOWED_ACE, ACE_HEADER, ACL, ACL_SIZE_INFORMATION, DACL_SECURITY_INFORMATION,
    OWNER_SECURITY_INFORMATION, PROTECTED_DACL_SECURITY_INFORMATION, PSECURITY_DESCRIPTOR, PSID,
    SECURITY_ATTRIBUTES, TOKEN_QUERY, TOKEN_USER,
};
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, OpenProcess, OpenProcessToken, PROCESS_QUERY_LIMITED_INFORMATION,
};

use super::super::Protection;

/// `ACCESS_ALLOWED_ACE_TYPE` (winnt.h); its constant lives in a feature of its own.
const ACCESS_ALLOWED_ACE_TYPE: u8 = 0;
/// `ACCESS_DENIED_ACE_TYPE`: a deny entry takes access away, so it never widens a DACL.
const ACCESS_DENIED_ACE_TYPE: u8 = 1;
/// LocalSystem (`S-1-5-18`): the operating system itself, which can open anything whatever
/// the DACL says, so an entry for it widens nothing.
const LOCAL_SYSTEM: [u8; 12] = [1, 1, 0, 0, 0, 0, 0, 5, 18, 0, 0, 0];

/// A security identifier: a user (or group), copied out of the system's buffer.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) struct Sid(Vec<u8>);

impl Sid {
    /// Copies the SID at `sid`.
    ///
    /// # Safety
    /// `sid` must point to a SID the system returned, alive for this call.
    unsafe fn copy_from(sid: PSID) -> Option<Sid> {
        // SAFETY: the caller's promise.
        if sid.is_null() || unsafe { IsValidSid(sid) } == 0 {
            return None;
        }
        // SAFETY: a valid SID is GetLengthSid bytes long.
        let length = unsafe { GetLengthSid(sid) } as usize;
        // SAFETY: as above.
        Some(Sid(unsafe {
            std::slice::from_raw_parts(sid.cast::<u8>(), length)
        }
        .to_vec()))
    }

    fn as_psid(&self) -> PSID {
        self.0.as_ptr().cast_mut().cast()
    }

    /// The last sub-authority (the relative id, RID): the number that tells users of one
    /// machine or domain apart.
    pub(crate) fn relative_id(&self) -> u32 {
        if self.0.is_empty() {
            return 0;
        }
        let sid = self.as_psid();
        // SAFETY: `self` holds a valid SID (checked when copied); the index is the last one.
        unsafe {
            let count = *GetSidSubAuthorityCount(sid);
            match count.checked_sub(1) {
                Some(last) => *GetSidSubAuthority(sid, u32::from(last)),
                None => 0,
            }
        }
    }
}

impl fmt::Display for Sid {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return formatter.write_str("no SID (our own could not be read)");
        }
        let mut text: *mut u16 = std::ptr::null_mut();
        // SAFETY: a valid SID; the system allocates `text`.
        let converted = unsafe { ConvertSidToStringSidW(self.as_psid(), &mut text) } != 0;
        // SAFETY: what the system allocated, if it did.
        match unsafe { take_system_string(converted, text) } {
            Some(string) => formatter.write_str(&string),
            None => formatter.write_str("an unprintable SID"),
        }
    }
}

/// Copies and frees a NUL-terminated UTF-16 string the system allocated with LocalAlloc.
///
/// # Safety
/// When `converted`, `text` must be such a string (or null).
unsafe fn take_system_string(converted: bool, text: *mut u16) -> Option<String> {
    if !converted || text.is_null() {
        return None;
    }
    // SAFETY: the caller's promise.
    let string = unsafe {
        let length = (0..).take_while(|&index| *text.add(index) != 0).count();
        String::from_utf16_lossy(std::slice::from_raw_parts(text, length))
    };
    // SAFETY: allocated by the system with LocalAlloc.
    unsafe { LocalFree(text.cast()) };
    Some(string)
}

impl fmt::Debug for Sid {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "Sid({self})")
    }
}

/// The user this process runs as. Read once: a process's user never changes.
pub(crate) fn current_user() -> Sid {
    static CURRENT: OnceLock<Sid> = OnceLock::new();
    CURRENT
        .get_or_init(|| {
            // SAFETY: the pseudo-handle of our own process needs no closing.
            token_user(unsafe { GetCurrentProcess() })
                // Without our own SID nothing can be ours: an empty SID matches no one (and is
                // never handed to the system).
                .unwrap_or(Sid(Vec::new()))
        })
        .clone()
}

/// The user the process `pid` runs as. A process we may not query (another user's, an
/// elevated one) is an error, so its connection is refused.
pub(crate) fn user_of_process(pid: u32) -> io::Result<Sid> {
    let process = open_process(pid, PROCESS_QUERY_LIMITED_INFORMATION)?;
    token_user(process.as_raw_handle())
}

/// Opens the process `pid` with `access`.
pub(crate) fn open_process(pid: u32, access: u32) -> io::Result<OwnedHandle> {
    // SAFETY: plain call; a null handle is the failure.
    let handle = unsafe { OpenProcess(access, 0, pid) };
    if handle.is_null() {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh handle we own.
    Ok(unsafe { OwnedHandle::from_raw_handle(handle) })
}

fn token_user(process: HANDLE) -> io::Result<Sid> {
    let mut token: HANDLE = std::ptr::null_mut();
    // SAFETY: `process` is a process handle with query access; `token` an out-pointer.
    if unsafe { OpenProcessToken(process, TOKEN_QUERY, &mut token) } == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh handle we own.
    let token = unsafe { OwnedHandle::from_raw_handle(token) };
    let mut needed = 0u32;
    // SAFETY: a size query with no buffer.
    unsafe {
        GetTokenInformation(
            token.as_raw_handle(),
            TokenUser,
            std::ptr::null_mut(),
            0,
            &mut needed,
        )
    };
    // u64 elements keep the TOKEN_USER at the start aligned.
    let mut buffer = vec![0u64; (needed as usize).div_ceil(8).max(1)];
    // SAFETY: the buffer holds `needed` bytes.
    if unsafe {
        GetTokenInformation(
            token.as_raw_handle(),
            TokenUser,
            buffer.as_mut_ptr().cast(),
            needed,
            &mut needed,
        )
    } == 0
    {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the system wrote a TOKEN_USER whose SID points into the same buffer.
    unsafe {
        let user = &*buffer.as_ptr().cast::<TOKEN_USER>();
        Sid::copy_from(user.User.Sid)
    }
    .ok_or_else(|| io::Error::other("the process token holds no valid user SID"))
}

/// A security descriptor built from SDDL: owner us, and a protected DACL that allows us
/// alone (inherited by whatever is created inside, for a directory).
pub(crate) struct OwnerOnly(PSECURITY_DESCRIPTOR);

impl OwnerOnly {
    pub(crate) fn new(protection: Protection) -> io::Result<OwnerOnly> {
        let user = current_user();
        let inheritance = match protection {
            Protection::PrivateDirectory => "OICI",
            Protection::PrivateFile => "",
        };
        // P: protected, so nothing of the parent's ACL is inherited; FA: full access.
        let sddl = format!("O:{user}D:P(A;{inheritance};FA;;;{user})");
        let wide: Vec<u16> = sddl.encode_utf16().chain([0]).collect();
        let mut descriptor: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
        // SAFETY: a NUL-terminated string; the system allocates the descriptor.
        if unsafe {
            ConvertStringSecurityDescriptorToSecurityDescriptorW(
                wide.as_ptr(),
                SDDL_REVISION_1,
                &mut descriptor,
                std::ptr::null_mut(),
            )
        } == 0
        {
            return Err(io::Error::last_os_error());
        }
        Ok(OwnerOnly(descriptor))
    }

    /// Attributes that create an object with this descriptor.
    pub(crate) fn attributes(&self) -> SECURITY_ATTRIBUTES {
        SECURITY_ATTRIBUTES {
            nLength: size_of::<SECURITY_ATTRIBUTES>() as u32,
            lpSecurityDescriptor: self.0,
            bInheritHandle: 0,
        }
    }

    /// Sets the DACL of the object `handle` (opened with `WRITE_DAC`) to this one, protected.
    pub(crate) fn apply(&self, handle: HANDLE) -> io::Result<()> {
        let mut present = 0;
        let mut defaulted = 0;
        let mut dacl: *mut ACL = std::ptr::null_mut();
        // SAFETY: our own descriptor; out-pointers.
        if unsafe { GetSecurityDescriptorDacl(self.0, &mut present, &mut dacl, &mut defaulted) }
            == 0
        {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `handle` is a file object opened with WRITE_DAC; the DACL is ours.
        let status = unsafe {
            SetSecurityInfo(
                handle,
                SE_FILE_OBJECT,
                DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                dacl,
                std::ptr::null(),
            )
        };
        win32_result(status)
    }
}

impl Drop for OwnerOnly {
    fn drop(&mut self) {
        // SAFETY: allocated by the system with LocalAlloc.
        unsafe { LocalFree(self.0) };
    }
}

/// Who owns a file object, and whether its DACL lets anyone else in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Access {
    /// The owner, when the system says.
    pub(crate) owner: Option<Sid>,
    /// Whether every entry that allows access allows it to us alone (or to the system
    /// itself; deny entries only take away); a missing (null) DACL allows everyone.
    pub(crate) owner_only: bool,
    /// The owner and DACL in SDDL, for a message.
    pub(crate) sddl: String,
}

/// Reads the owner and DACL of the file object `handle` (opened with `READ_CONTROL`).
pub(crate) fn access_of(handle: HANDLE) -> io::Result<Access> {
    let mut owner: PSID = std::ptr::null_mut();
    let mut dacl: *mut ACL = std::ptr::null_mut();
    let mut descriptor: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
    // SAFETY: out-pointers; the descriptor they point into is freed below.
    let status = unsafe {
        GetSecurityInfo(
            handle,
            SE_FILE_OBJECT,
            OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION,
            &mut owner,
            std::ptr::null_mut(),
            &mut dacl,
            std::ptr::null_mut(),
            &mut descriptor,
        )
    };
    win32_result(status)?;
    // SAFETY: owner and dacl point into `descriptor`, alive until the LocalFree.
    let access = unsafe {
        Access {
            owner: Sid::copy_from(owner),
            owner_only: !dacl.is_null() && allows_only(dacl, &current_user()),
            sddl: sddl_of(descriptor),
        }
    };
    // SAFETY: allocated by the system with LocalAlloc.
    unsafe { LocalFree(descriptor) };
    Ok(access)
}

/// The owner and DACL of `descriptor` in SDDL.
///
/// # Safety
/// `descriptor` must be a valid security descriptor.
unsafe fn sddl_of(descriptor: PSECURITY_DESCRIPTOR) -> String {
    let mut text: *mut u16 = std::ptr::null_mut();
    // SAFETY: the caller's promise; the system allocates `text`.
    let converted = unsafe {
        ConvertSecurityDescriptorToStringSecurityDescriptorW(
            descriptor,
            SDDL_REVISION_1,
            OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION,
            &mut text,
            std::ptr::null_mut(),
        )
    } != 0;
    // SAFETY: what the system allocated, if it did.
    unsafe { take_system_string(converted, text) }.unwrap_or_else(|| "unprintable".to_owned())
}

/// Whether every allowing entry of `dacl` names `user` (or the system itself).
///
/// # Safety
/// `dacl` must point to a valid ACL.
unsafe fn allows_only(dacl: *mut ACL, user: &Sid) -> bool {
    let mut size = ACL_SIZE_INFORMATION::default();
    // SAFETY: the caller's promise; `size` is the buffer of this information class.
    if unsafe {
        GetAclInformation(
            dacl,
            (&mut size as *mut ACL_SIZE_INFORMATION).cast(),
            size_of::<ACL_SIZE_INFORMATION>() as u32,
            AclSizeInformation,
        )
    } == 0
    {
        return false;
    }
    (0..size.AceCount).all(|index| {
        let mut entry: *mut c_void = std::ptr::null_mut();
        // SAFETY: index below the count; the entry points into the ACL.
        if unsafe { GetAce(dacl, index, &mut entry) } == 0 || entry.is_null() {
            return false;
        }
        // SAFETY: every ACE starts with its header.
        let header = unsafe { &*entry.cast::<ACE_HEADER>() };
        match header.AceType {
            ACCESS_ALLOWED_ACE_TYPE => {
                let allowed = entry.cast::<ACCESS_ALLOWED_ACE>();
                // SAFETY: an allowed ACE's SID starts at SidStart.
                let sid =
                    unsafe { Sid::copy_from(std::ptr::addr_of_mut!((*allowed).SidStart).cast()) };
                sid.as_ref()
                    .is_some_and(|sid| sid == user || sid.0 == LOCAL_SYSTEM)
            }
            ACCESS_DENIED_ACE_TYPE => true,
            // Callback and object entries may allow anyone: not owner-only.
            _ => false,
        }
    })
}

fn win32_result(status: u32) -> io::Result<()> {
    if status == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(status as i32))
    }
}
