//! Rust processes for a C++ program: a squarer that reads integers from a channel
//! a C++ process writes, and writes their squares on a channel it makes and hands
//! back to C++.

// cxx hands an opaque Rust type (a channel end) across the bridge in a Box.
#![allow(clippy::boxed_local)]

use hoare::ffi::{ChanRx, NativeElem, Rx};
use hoare::{Receiver, Sender};

#[cxx::bridge(namespace = "my_procs")]
mod bridge {
    // hoare's bridge types, named as hoare's own bridge declares them.
    #[namespace = "hoare::ffi"]
    unsafe extern "C++" {
        include!("hoare/src/ffi/mod.rs.h");

        type ChanRx = hoare::ffi::ChanRx;
    }

    extern "Rust" {
        /// Spawns a Rust process that squares every integer read from `numbers`
        /// and returns the channel the squares come out of. Poison travels on: when
        /// `numbers` is poisoned the squares' channel is poisoned too.
        fn spawn_squarer(numbers: Box<ChanRx>) -> Result<Box<ChanRx>>;
    }
}

fn spawn_squarer(numbers: Box<ChanRx>) -> Result<Box<ChanRx>, String> {
    // hoare::spawn panics outside a runtime, and a panic must not reach C++.
    if !hoare::in_process() {
        return Err("my_procs: spawn_squarer called outside hoare::run".into());
    }
    let numbers = i64::rx_from(*numbers).map_err(|_| "my_procs: a channel of int64_t expected")?;
    let (tx, squares) = hoare::one2one::<i64>();
    // The C++ side chose the sharing kind of `numbers`: take either. Dropping the
    // handle detaches the process (the poison of `squares` tells C++ it ended).
    match numbers {
        Rx::One(rx) => drop(hoare::spawn(move || square(rx, tx))),
        Rx::Any(rx) => drop(hoare::spawn(move || square(rx, tx))),
    }
    Ok(Box::new(i64::rx_into(Rx::One(squares))))
}

/// The process: squares until `numbers` is poisoned; returning drops `squares`,
/// which poisons its channel.
fn square<S: hoare::chan::Sharing>(numbers: Receiver<i64, S>, squares: Sender<i64>) {
    for n in numbers.iter() {
        if squares.send(n * n).is_err() {
            break;
        }
    }
}
