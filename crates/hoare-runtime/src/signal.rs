//! Stack overflow detection: a SIGSEGV/SIGBUS handler (on an alternate signal
//! stack) that recognises a fault in the guard page of the running process's stack,
//! reports it with `write(2)` and aborts; any other fault goes to the handler that
//! was installed before (Rust's own, which reports thread stack overflows).

use crate::proc;
use std::mem::MaybeUninit;
use std::sync::Once;

static INSTALL: Once = Once::new();
static mut OLD_SEGV: MaybeUninit<libc::sigaction> = MaybeUninit::zeroed();
static mut OLD_BUS: MaybeUninit<libc::sigaction> = MaybeUninit::zeroed();

/// Installs the handler once per OS process.
pub(crate) fn install() {
    INSTALL.call_once(|| {
        // SAFETY: plain sigaction calls with a zeroed, fully initialised struct; the
        // OLD_* statics are written here once, before the handler can run (it is not
        // installed yet), and only read afterwards.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = handler as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(
                libc::SIGSEGV,
                &sa,
                (&raw mut OLD_SEGV).cast::<libc::sigaction>(),
            );
            libc::sigaction(
                libc::SIGBUS,
                &sa,
                (&raw mut OLD_BUS).cast::<libc::sigaction>(),
            );
        }
    });
}

/// An alternate signal stack this module installed for a thread (none if the
/// thread already had one, as std's threads do).
pub(crate) struct AltStack(Option<(*mut libc::c_void, usize)>);

impl Drop for AltStack {
    fn drop(&mut self) {
        if let Some((p, len)) = self.0 {
            // SAFETY: disable the alternate stack before unmapping the memory we
            // mapped for it in `ensure_altstack`.
            unsafe {
                let mut ss: libc::stack_t = std::mem::zeroed();
                ss.ss_flags = libc::SS_DISABLE;
                libc::sigaltstack(&ss, std::ptr::null_mut());
                libc::munmap(p, len);
            }
        }
    }
}

/// Makes sure this thread has an alternate signal stack, so the handler can run
/// after a process overflowed its stack.
pub(crate) fn ensure_altstack() -> AltStack {
    // SAFETY: querying and setting this thread's signal stack; the memory is a fresh
    // mapping owned by the returned guard.
    unsafe {
        let mut old: libc::stack_t = std::mem::zeroed();
        libc::sigaltstack(std::ptr::null(), &mut old);
        if old.ss_flags & libc::SS_DISABLE == 0 {
            return AltStack(None);
        }
        let len = 64 * 1024;
        let p = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if p == libc::MAP_FAILED {
            return AltStack(None);
        }
        let ss = libc::stack_t {
            ss_sp: p,
            ss_flags: 0,
            ss_size: len,
        };
        libc::sigaltstack(&ss, std::ptr::null_mut());
        AltStack(Some((p, len)))
    }
}

struct Buf {
    b: [u8; 512],
    n: usize,
}

impl Buf {
    fn put(&mut self, s: &[u8]) {
        for &c in s {
            if self.n < self.b.len() {
                self.b[self.n] = c;
                self.n += 1;
            }
        }
    }
    fn num(&mut self, mut v: u64) {
        let mut d = [0u8; 20];
        let mut i = d.len();
        loop {
            i -= 1;
            d[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        self.put(&d[i..]);
    }
}

extern "C" fn handler(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo; the current process is a
    // const-initialised thread-local cell (a plain TLS load, see `context`), set
    // by this thread's worker to the process it runs, whose header stays valid
    // while it runs.
    unsafe {
        let addr = (*info).si_addr() as usize;
        let p = proc::current();
        if !p.is_null() {
            let guard = (*p).slot;
            if addr >= guard && addr < guard + crate::stack::GUARD {
                let mut b = Buf { b: [0; 512], n: 0 };
                b.put(b"hoare: stack overflow in process '");
                b.put((*p).name_str().as_bytes());
                b.put(b"' (id ");
                b.num((*p).id);
                b.put(b")\n");
                libc::write(2, b.b.as_ptr().cast(), b.n);
                libc::abort();
            }
        }
        let old: &libc::sigaction = &*if sig == libc::SIGBUS {
            (&raw const OLD_BUS).cast::<libc::sigaction>()
        } else {
            (&raw const OLD_SEGV).cast::<libc::sigaction>()
        };
        if old.sa_flags & libc::SA_SIGINFO != 0 {
            let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                std::mem::transmute(old.sa_sigaction);
            f(sig, info, ctx);
        } else if old.sa_sigaction == libc::SIG_DFL || old.sa_sigaction == libc::SIG_IGN {
            // Restore the default and return: the fault happens again and kills us
            // the ordinary way.
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = libc::SIG_DFL;
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        } else {
            let f: extern "C" fn(libc::c_int) = std::mem::transmute(old.sa_sigaction);
            f(sig);
        }
    }
}
