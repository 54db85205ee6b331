//! agentmem's side of the comparison harness.
//!
//! - `agentmem-compare gen DIR`: writes the shared data set (fixed seed) that both sides read;
//! - `agentmem-compare run WORKLOAD DIR`: runs one workload and prints one JSON object
//!   (`{"tool": "agentmem", "metrics": {...}}`, times in microseconds);
//! - `agentmem-compare chart RESULTS.json OUT.png`: draws the ratios of a results file.
//!
//! The Python side (`peers.py`) reads the same files and prints the same shape; `compare.py`
//! runs both, interleaved, and writes `bench/results/`.

mod chart;
mod data;
mod workloads;

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["gen", dir] => data::generate(Path::new(dir)),
        ["run", workload, dir] => workloads::run(workload, Path::new(dir)).map(|metrics| {
            let out = serde_json::json!({ "tool": "agentmem", "metrics": metrics });
            println!("{out}");
        }),
        ["chart", results, png] => chart::draw(Path::new(results), Path::new(png)),
        _ => Err(
            "usage: agentmem-compare gen DIR | run WORKLOAD DIR | chart RESULTS.json OUT.png"
                .into(),
        ),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("agentmem-compare: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Errors of the harness: reported and fatal.
pub type Error = Box<dyn std::error::Error + Send + Sync>;
