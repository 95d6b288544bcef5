//! A name service program (issue 14; JCSP's CNS): nodes register the names of
//! their published channels here and resolve names through it, so a writer
//! need not know which machine or port a reader is on.
//!
//! ```text
//! cargo run --release --example name_service -- 127.0.0.1:7700 SECRET
//! ```
//!
//! Prints `listening ADDR`, then serves until killed. A program then does
//! `node.register("127.0.0.1:7700", "results")` after publishing `"results"`,
//! and another `node.connect_named::<T>("127.0.0.1:7700", "results")`.

fn main() {
    let mut args = std::env::args().skip(1);
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:0".to_owned());
    let secret = args.next().unwrap_or_else(|| {
        eprintln!("usage: name_service [ADDR] SECRET");
        std::process::exit(2)
    });
    hoare::run(move || {
        let node = match hoare::net::Node::bind(addr.as_str(), secret.as_bytes()) {
            Ok(n) => n,
            Err(e) => {
                eprintln!("name_service: {e}");
                std::process::exit(1)
            }
        };
        if let Err(e) = hoare::net::serve_names(&node) {
            eprintln!("name_service: {e}");
            std::process::exit(1)
        }
        println!("listening {}", node.local_addr());
        // Serve until killed.
        loop {
            hoare::sleep_for(std::time::Duration::from_secs(3600));
        }
    });
}
