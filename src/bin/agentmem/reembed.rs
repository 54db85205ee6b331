//! `agentmem reembed`: embed what the store holds without a vector, now, with a progress
//! bar.

use std::io::{self, IsTerminal};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agentmemory::reembed::{targets, Backfill, BackfillOptions, BackfillProgress, Phase};
use agentmemory::vector::Embedder;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

use crate::cli::ReembedArgs;
use crate::error::CliError;
use crate::output;
use crate::store::Stores;

/// What the command prints with `--json`.
#[derive(Serialize)]
struct Summary<'a> {
    model: &'a str,
    dimension: usize,
    model_changed: bool,
    dropped: usize,
    embedded: usize,
    seconds: f64,
}

/// The embedding model the environment offers, or a usage error saying how to get one.
fn embedder() -> Result<Arc<dyn Embedder>, CliError> {
    #[cfg(feature = "local-embed")]
    {
        match agentmemory::embed::LocalEmbedder::from_env() {
            Ok(Some(embedder)) => Ok(Arc::new(embedder)),
            Ok(None) => Err(CliError::Usage(
                "reembed needs the embedding model: run `agentmem model fetch` (or set \
                 AGENTMEM_EMBED_MODEL to its directory)"
                    .to_owned(),
            )),
            Err(e) => Err(CliError::Usage(e.to_string())),
        }
    }
    #[cfg(not(feature = "local-embed"))]
    {
        Err(CliError::Usage(
            "reembed needs the local embedder, which this build lacks: install with \
             `cargo install agentmemory --locked --features cli,local-embed`"
                .to_owned(),
        ))
    }
}

fn bar() -> ProgressBar {
    let bar = ProgressBar::new(0).with_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} {msg} ({eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    if io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::stderr());
        bar.enable_steady_tick(Duration::from_millis(200));
    } else {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar
}

fn show(bar: &ProgressBar, p: &BackfillProgress) {
    let msg = match p.phase {
        Phase::Checking => "reading the recorded model",
        Phase::Dropping => "dropping the old vectors",
        Phase::Embedding => "embedded",
        _ => "",
    };
    bar.set_message(msg);
    bar.set_length(p.total.max(p.embedded) as u64);
    bar.set_position(p.embedded as u64);
}

/// Runs `agentmem reembed` on the store at `url`.
pub async fn run(url: &str, args: ReembedArgs) -> Result<(), CliError> {
    let embedder = embedder()?;
    let stores = Stores::open_plain(url).await?;
    let targets = targets(stores.container())?;
    let options = BackfillOptions::default()
        .batch(usize::from(args.batch))
        .all(args.all);
    let bar = bar();
    let shown = bar.clone();
    let started = Instant::now();
    let report = Backfill::run(targets, embedder, options, move |p| show(&shown, p)).await;
    bar.finish_and_clear();
    let report = report.map_err(|e| CliError::runtime("re-embed", e.chain()))?;
    let seconds = started.elapsed().as_secs_f64();
    if args.json.json {
        return output::json(&Summary {
            model: &report.model.name,
            dimension: report.model.dimension,
            model_changed: report.model_changed,
            dropped: report.dropped,
            embedded: report.embedded,
            seconds,
        });
    }
    let mut text = format!(
        "embedded {} fact(s) and document(s) with {} in {seconds:.1} s",
        report.embedded, report.model
    );
    if report.dropped > 0 {
        let why = if report.model_changed {
            "made by another model"
        } else {
            "--all"
        };
        text.push_str(&format!(
            "; dropped {} old vector(s) ({why})",
            report.dropped
        ));
    }
    output::line(text)
}
