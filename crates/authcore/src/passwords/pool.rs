//! Password hashing off the async threads: a hash takes tens of milliseconds of CPU and
//! about 19 MiB of memory, which would stall every request sharing an async worker. A few
//! threads (one per CPU) take the work from a bounded queue, so the memory in use stays
//! bounded however many sign-ins arrive at once, and a full queue answers
//! [`SourceError::Busy`] at once instead of growing.

use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, OnceLock};

use futures_channel::oneshot;

use super::SourceError;

type Job = Box<dyn FnOnce() + Send>;

/// Waiting jobs beyond the ones running.
const QUEUE: usize = 256;

/// Runs `work` on the hashing threads and answers its result.
pub(crate) async fn run<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, SourceError> {
    let (tx, rx) = oneshot::channel();
    let job: Job = Box::new(move || {
        let _ = tx.send(work());
    });
    match sender().try_send(job) {
        Ok(()) => {}
        Err(TrySendError::Full(_)) => return Err(SourceError::Busy),
        Err(TrySendError::Disconnected(_)) => {
            return Err(SourceError::Unavailable(
                "the hashing threads are gone".into(),
            ));
        }
    }
    rx.await
        .map_err(|_| SourceError::Unavailable("a password check failed".into()))
}

fn sender() -> &'static SyncSender<Job> {
    static SENDER: OnceLock<SyncSender<Job>> = OnceLock::new();
    SENDER.get_or_init(|| {
        let (tx, rx) = mpsc::sync_channel::<Job>(QUEUE);
        let rx = Arc::new(Mutex::new(rx));
        let threads = std::thread::available_parallelism().map_or(2, usize::from);
        for i in 0..threads {
            let rx = Arc::clone(&rx);
            let spawned = std::thread::Builder::new()
                .name(format!("authcore-hash-{i}"))
                .spawn(move || worker(&rx));
            if let Err(e) = spawned {
                tracing::error!(error = %e, "cannot start a password hashing thread");
            }
        }
        tx
    })
}

fn worker(rx: &Mutex<Receiver<Job>>) {
    loop {
        // A poisoned lock only means another worker panicked while waiting: keep going.
        let job = match rx.lock() {
            Ok(guard) => guard.recv(),
            Err(poisoned) => poisoned.into_inner().recv(),
        };
        match job {
            Ok(job) => job(),
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    #[tokio::test]
    async fn runs_work_and_answers_its_result() {
        let mut answers = Vec::new();
        for i in 0..8 {
            answers.push(super::run(move || i * 2).await.unwrap());
        }
        assert_eq!(answers, [0, 2, 4, 6, 8, 10, 12, 14]);
    }
}
