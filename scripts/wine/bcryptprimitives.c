/*
 * A stand-in for Windows' bcryptprimitives.dll, for wine older than 8.13, which has none.
 *
 * Rust's standard library (1.78 and later) imports ProcessPrng from bcryptprimitives.dll
 * for its random numbers (HashMap keys), so without this DLL every Rust program built for
 * x86_64-pc-windows-gnu exits with status 53, before main, under such a wine
 * (rust-lang/rust#121337). This one forwards to RtlGenRandom (advapi32!SystemFunction036),
 * which every wine has.
 *
 * Built and placed in the prefix's system32 by scripts/wine.sh:
 *   x86_64-w64-mingw32-gcc -shared -O2 -s -nostdlib -Wl,--entry,DllMain \
 *       -o bcryptprimitives.dll bcryptprimitives.c bcryptprimitives.def -lkernel32 -ladvapi32
 * (no C runtime: it imports kernel32 and advapi32 only).
 * Only for testing under wine: real Windows (10 and later) ships the real DLL.
 */
#include <windows.h>

/* RtlGenRandom: its header declaration lives behind SystemFunction036 in ntsecapi.h. */
BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

/*
 * BOOL ProcessPrng(PBYTE pbData, SIZE_T cbData): fills the buffer with random bytes. The
 * real one never fails (it returns TRUE always); RtlGenRandom takes a 32-bit length, so
 * the buffer goes in chunks, and a failure (which the real one cannot report) ends the
 * process rather than hand out bytes that are not random.
 */
BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk)) {
            ExitProcess(0xC0000001); /* STATUS_UNSUCCESSFUL */
        }
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID reserved)
{
    (void)instance;
    (void)reason;
    (void)reserved;
    return TRUE;
}
