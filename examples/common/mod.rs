//! Helpers shared by the benchmark examples (included with
//! `#[path = "common/mod.rs"] mod common;`): hand-parsed `--name value` flags,
//! a runtime with the requested number of workers, and timing conversions.
//!
//! Every benchmark prints human-readable lines, then as its last stdout line
//! `key=value` pairs with the keys of its Go counterpart (`benches/compare.sh`
//! reads that line).
//!
//! The flags are spelled as in the Go programs of `benches/go` (`--workers 2
//! --iters 1000`; `-name value` and `--name=value` work too), so
//! `benches/compare.sh` can run both sides with the same arguments.

// Each example uses only some of these helpers.
#![allow(dead_code)]

use std::str::FromStr;
use std::time::Duration;

/// Command-line flags: `--name value` pairs, and bare `--name` for booleans.
pub struct Flags {
    program: String,
    pairs: Vec<(String, String)>,
}

impl Flags {
    /// Parses the command line. `known` lists the flags taking a value,
    /// `bools` the boolean ones (`--check`, `--check=false`). Anything else
    /// prints a usage line and exits with status 2.
    pub fn parse(known: &[&str], bools: &[&str]) -> Flags {
        let mut args = std::env::args();
        let program = args.next().unwrap_or_default();
        let program = program.rsplit('/').next().unwrap_or_default().to_owned();
        let usage = || -> ! {
            let mut u: Vec<String> = known.iter().map(|k| format!("[--{k} N]")).collect();
            u.extend(bools.iter().map(|b| format!("[--{b}]")));
            eprintln!("usage: {program} {}", u.join(" "));
            std::process::exit(2)
        };
        let mut pairs = Vec::new();
        while let Some(arg) = args.next() {
            if arg == "-h" || arg == "--help" {
                usage();
            }
            let Some(name) = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-')) else {
                eprintln!("{program}: unexpected argument {arg:?}");
                usage();
            };
            let (name, inline) = match name.split_once('=') {
                Some((n, v)) => (n.to_owned(), Some(v.to_owned())),
                None => (name.to_owned(), None),
            };
            let value = if bools.contains(&name.as_str()) {
                inline.unwrap_or_else(|| "true".to_owned())
            } else if known.contains(&name.as_str()) {
                match inline.or_else(|| args.next()) {
                    Some(v) => v,
                    None => {
                        eprintln!("{program}: --{name} needs a value");
                        usage();
                    }
                }
            } else {
                eprintln!("{program}: unknown flag --{name}");
                usage();
            };
            pairs.push((name, value));
        }
        Flags { program, pairs }
    }

    /// The value of `--name` (the last one given), or `default`.
    pub fn get<T: FromStr>(&self, name: &str, default: T) -> T {
        match self.pairs.iter().rev().find(|(n, _)| n == name) {
            None => default,
            Some((_, v)) => v.parse().unwrap_or_else(|_| {
                eprintln!("{}: bad value {v:?} for --{name}", self.program);
                std::process::exit(2)
            }),
        }
    }

    /// A boolean flag: `--name`, `--name=true` or `--name=false`.
    pub fn bool(&self, name: &str, default: bool) -> bool {
        self.get(name, default)
    }

    /// `--workers N`; by default `HOARE_WORKERS`, else every core (as Go's
    /// `GOMAXPROCS`). Values below 1 also mean the default.
    pub fn workers(&self) -> usize {
        match self.get::<i64>("workers", 0) {
            n if n >= 1 => n as usize,
            _ => hoare::default_workers(),
        }
    }

    /// Exits with status 2 and `msg` unless `ok` (for checking flag values).
    pub fn require(&self, ok: bool, msg: &str) {
        if !ok {
            eprintln!("{}: {msg}", self.program);
            std::process::exit(2);
        }
    }
}

/// A runtime with exactly `workers` worker threads.
pub fn runtime(workers: usize) -> hoare::Runtime {
    hoare::Runtime::builder()
        .workers(workers)
        .build()
        .expect("runtime")
}

/// `d` in nanoseconds divided by `n`.
pub fn per_op_ns(d: Duration, n: u64) -> f64 {
    d.as_nanos() as f64 / n.max(1) as f64
}

/// `d` in milliseconds.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
