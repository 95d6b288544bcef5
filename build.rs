//! Builds the C++ bridge when the `cxx` feature is on; Rust users need no C++ compiler.
//!
//! `#[cfg(feature = "cxx")]` does not apply to a build script, so the feature is read
//! from `CARGO_FEATURE_CXX`. With the feature on, `cxx-build` generates the C++ side
//! of `src/ffi/mod.rs` and compiles it (the objects end up inside the static library
//! built with `cargo rustc --crate-type staticlib`), and the generated headers
//! (`hoare/src/ffi/mod.rs.h`, `rust/cxx.h`) are copied to
//! `<target>/<profile>/hoare-cxx/include`, a path that does not depend on a hash,
//! for CMake to put on the include path. With `cxx-test-hooks`
//! (`CARGO_FEATURE_CXX_TEST_HOOKS`) the second bridge, `src/ffi/test_hooks.rs`, is
//! built too and its header `hoare/src/ffi/test_hooks.rs.h` copied alongside. (One
//! target directory may hold both builds, cargo keeping one artifact per feature
//! set, so the header may be there for a library built without the hooks: code
//! that calls them then fails to link, not to compile.)
//!
//! `Cargo.toml` sets `links = "hoare"` so that cxx-build hands these headers (and
//! `cpp/include`) to the build script of a crate that depends on hoare directly
//! and has a bridge of its own (`cpp/examples/my_procs`, `hoare_add_rust_library`
//! in `cpp/cmake/HoareRust.cmake`).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var_os("CARGO_FEATURE_CXX").is_some() {
        #[cfg(feature = "cxx")]
        cxx_bridge::build();
    }
}

// The build script is compiled with the package's features, so `cxx-build` (an
// optional build-dependency enabled by the `cxx` feature) is only referenced here.
#[cfg(feature = "cxx")]
mod cxx_bridge {
    use std::path::{Path, PathBuf};

    pub fn build() {
        let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap());
        let include = manifest.join("cpp/include");
        let hooks = std::env::var_os("CARGO_FEATURE_CXX_TEST_HOOKS").is_some();
        let mut bridges = vec!["src/ffi/mod.rs"];
        if hooks {
            bridges.push("src/ffi/test_hooks.rs");
        }
        // A crate of the user's own with a cxx bridge that names hoare's types
        // (`include!("hoare/src/ffi/mod.rs.h")`) gets hoare's generated headers
        // through `links = "hoare"` (cxx-build passes them on to direct dependents);
        // they include `hoare/bridge.hpp`, so cpp/include goes with them.
        cxx_build::CFG.exported_header_dirs.push(&include);
        cxx_build::bridges(&bridges)
            .include(&include)
            .std("c++17")
            .flag_if_supported("-Wno-unused-parameter")
            .compile("hoare-cxxbridge");
        for b in &bridges {
            println!("cargo:rerun-if-changed={b}");
        }
        println!("cargo:rerun-if-changed=cpp/include/hoare/bridge.hpp");

        // Copy the generated headers to a stable place next to the library.
        let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap());
        // OUT_DIR = <target>/<profile>/build/hoare-<hash>/out
        if let Some(profile_dir) = out.ancestors().nth(3) {
            let dest = profile_dir.join("hoare-cxx/include");
            copy_tree(&out.join("cxxbridge/include"), &dest);
        }
    }

    fn copy_tree(from: &Path, to: &Path) {
        let Ok(entries) = std::fs::read_dir(from) else {
            return;
        };
        std::fs::create_dir_all(to).expect("create header dir");
        for e in entries.flatten() {
            // cxx-build lays the tree out with symlinks; follow them.
            let src = e.path();
            let dst = to.join(e.file_name());
            let meta = std::fs::metadata(&src).expect("stat generated header");
            if meta.is_dir() {
                copy_tree(&src, &dst);
            } else {
                let new = std::fs::read(&src).expect("read generated header");
                if std::fs::read(&dst).ok().as_deref() != Some(&new[..]) {
                    std::fs::write(&dst, new).expect("write generated header");
                }
            }
        }
    }
}
