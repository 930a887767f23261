//! `cargo run --release -p dreadpool-bench --bin compare -- --help`

use dreadpool_bench::compare::{self, Invocation};

fn main() {
    match compare::parse_args(std::env::args().skip(1)) {
        Ok(Invocation::Compare(options)) => {
            let results = compare::run(&options);
            print!("{}", compare::render(&results));
        }
        Ok(Invocation::Sweep { options, counts }) => {
            print!("{}", compare::sweep(&options, &counts).render());
        }
        Ok(Invocation::Child {
            kind,
            contender,
            threads,
            sizes,
            tuning,
        }) => match compare::run_child(kind, contender, threads, sizes, tuning) {
            Ok(figure) => {
                println!("RESULT {figure}");
                // The pool may be blocked on purpose (memory): do not wait.
                std::process::exit(0);
            }
            Err(error) => {
                eprintln!("compare --child {}: {error}", kind.name());
                std::process::exit(1);
            }
        },
        // The help (status 0) or a mistake on the command line (status 2).
        Err(error) => error.exit(),
    }
}
