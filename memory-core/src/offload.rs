//! CPU-heavy work moved off the async runtime's workers.
//!
//! A worker thread that runs for milliseconds without reaching an `.await` stalls every
//! other task scheduled on it (on a `current_thread` runtime, every task). Heavy calls (a
//! bulk load analysing thousands of documents, a scan over a large dense index) therefore
//! run on tokio's blocking pool through [`run`]; small calls stay inline, where they cost
//! less than the hop to another thread (waking a pooled thread and waking the task back
//! takes some tens of microseconds).

use crate::error::{MemoryError, Result};

/// Runs `work` on tokio's blocking thread pool and waits for it without holding the
/// caller's worker; outside a tokio runtime (nowhere to move it to), runs it here.
///
/// `what` names the operation in the error returned if the runtime shuts down before the
/// work ran. A panic in `work` is resumed in the caller, as if it had run inline.
pub(crate) async fn run<T, F>(what: &'static str, work: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T> + Send + 'static,
{
    if tokio::runtime::Handle::try_current().is_err() {
        return work();
    }
    match tokio::task::spawn_blocking(work).await {
        Ok(result) => result,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => Err(MemoryError::Store {
            store: "in-memory".to_owned(),
            operation: what.to_owned(),
            source: Box::new(e),
        }),
    }
}

/// Runs `work` here when `inline`, on the blocking pool otherwise (see [`run`]).
pub(crate) async fn run_if_heavy<T, F>(inline: bool, what: &'static str, work: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T> + Send + 'static,
{
    if inline {
        work()
    } else {
        run(what, work).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_inline_outside_a_runtime() {
        let here = std::thread::current().id();
        let ran = futures_util::FutureExt::now_or_never(run("test", move || {
            Ok(std::thread::current().id() == here)
        }));
        assert!(matches!(ran, Some(Ok(true))));
    }

    #[tokio::test]
    async fn runs_elsewhere_inside_a_runtime_and_keeps_errors() {
        let here = std::thread::current().id();
        let elsewhere = run("test", move || Ok(std::thread::current().id() != here))
            .await
            .unwrap();
        assert!(elsewhere);
        let inline = run_if_heavy(
            true,
            "test",
            move || Ok(std::thread::current().id() == here),
        )
        .await
        .unwrap();
        assert!(inline);
        let err = run::<(), _>("test", || Err(MemoryError::invalid("x", "bad"))).await;
        assert!(matches!(err, Err(MemoryError::InvalidArgument { .. })));
    }

    #[tokio::test]
    #[should_panic(expected = "boom")]
    async fn a_panic_reaches_the_caller() {
        let _ = run::<(), _>("test", || panic!("boom")).await;
    }
}
