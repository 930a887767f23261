// A build script is what `links = "rayon-core"` needs; nothing is linked.
// The key is there so that cargo refuses a build with two rayon-cores in it,
// exactly as the real crate's does.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
}
