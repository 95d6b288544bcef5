//! Generates and compiles the C++ side of this crate's bridge. Through hoare's
//! `links = "hoare"`, cxx-build puts hoare's headers (`hoare/src/ffi/mod.rs.h`,
//! `hoare/bridge.hpp`) on the include path.

fn main() {
    cxx_build::bridge("src/lib.rs")
        .std("c++17")
        .compile("my-procs-bridge");
    println!("cargo:rerun-if-changed=src/lib.rs");
}
