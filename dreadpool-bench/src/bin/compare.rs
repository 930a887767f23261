//! `cargo run --release -p dreadpool-bench --bin compare -- --help`

use dreadpool_bench::compare::{self, Invocation};

fn main() {
    match compare::parse_args(std::env::args().skip(1)) {
        Ok(Invocation::Help) => print!("{}", compare::USAGE),
        Ok(Invocation::Compare(options)) => {
            let results = compare::run(&options);
            print!("{}", compare::render(&results));
        }
        Ok(Invocation::Child {
            kind,
            contender,
            threads,
            sizes,
            backlog,
        }) => match compare::run_child(&kind, contender, threads, sizes, backlog) {
            Ok(figure) => {
                println!("RESULT {figure}");
                // The pool may be blocked on purpose (memory): do not wait.
                std::process::exit(0);
            }
            Err(error) => {
                eprintln!("compare --child {kind}: {error}");
                std::process::exit(1);
            }
        },
        Err(error) => {
            eprintln!("compare: {error}\n\n{}", compare::USAGE);
            std::process::exit(2);
        }
    }
}
