//! The studio binary.

fn main() {
    println!("studio: the host arrives with the studio issue");
}
