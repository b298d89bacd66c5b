/* ProcessPrng for Wine releases that lack bcryptprimitives.dll (Debian 12's Wine 8): Rust's
 * standard library on Windows draws its randomness from it. The test command builds this into
 * the Wine prefix only; real Windows has the system's own DLL. It forwards to RtlGenRandom
 * (advapi32's SystemFunction036), which every Wine has. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
