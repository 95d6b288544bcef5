//! A first hoare program: a few processes on the default runtime.
//!
//! `cargo run --example hello`

fn main() {
    let total = hoare::run(|| {
        let greeters: Vec<_> = ["Tony", "Edsger", "Robin"]
            .into_iter()
            .map(|who| {
                hoare::Builder::new()
                    .name(format!("greeter-{who}"))
                    .spawn(move || {
                        println!(
                            "hello, {who}, from {} (id {})",
                            hoare::name().unwrap(),
                            hoare::id()
                        );
                        who.len()
                    })
                    .expect("spawn")
            })
            .collect();
        greeters
            .into_iter()
            .map(|h| h.join().unwrap())
            .sum::<usize>()
    });
    println!("{total} letters greeted");
}
