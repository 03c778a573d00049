//! Two pieces of work at the same time: cleanup reads the store while it lists the sessions
//! directory, and plans halves of large plans on two threads. Where no second thread can
//! be had, the work runs one after the other, with the same results.

/// Runs `here` on this thread and `there` on a second one at the same time, and returns
/// both results; without a second thread to be had, runs `there` after `here`. A panic
/// in either is resumed here.
pub(crate) fn at_once<A, B: Send>(
    here: impl FnOnce() -> A,
    there: impl FnOnce() -> B + Send,
) -> (A, B) {
    at_once_if(true, here, there)
}

/// [`at_once`], trying the second thread only when `spawn` (the tests take the road
/// without one).
fn at_once_if<A, B: Send>(
    spawn: bool,
    here: impl FnOnce() -> A,
    there: impl FnOnce() -> B + Send,
) -> (A, B) {
    // The slot keeps `there` for this thread when no second thread starts.
    let slot = std::sync::Mutex::new(Some(there));
    let take = || {
        slot.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    };
    let (a, b) = std::thread::scope(|s| {
        let other = spawn
            .then(|| {
                std::thread::Builder::new()
                    .spawn_scoped(s, || take().map(|f| f()))
                    .ok()
            })
            .flatten();
        let a = here();
        let b = other.and_then(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        (a, b)
    });
    match (b, take()) {
        (Some(b), _) => (a, b),
        (None, Some(f)) => (a, f()),
        (None, None) => unreachable!("`there` runs on the second thread or here"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_once_returns_both_results_with_or_without_a_second_thread() {
        for spawn in [true, false] {
            let here_thread = std::thread::current().id();
            let (a, (b, there_thread)) =
                at_once_if(spawn, || "here", || (21 * 2, std::thread::current().id()));
            assert_eq!((a, b), ("here", 42));
            // Without a second thread, `there` ran here, after `here`.
            assert_eq!(there_thread == here_thread, !spawn, "spawn: {spawn}");
        }
    }

    #[test]
    fn a_panic_on_the_second_thread_reaches_the_caller() {
        for spawn in [true, false] {
            let r = std::panic::catch_unwind(|| {
                at_once_if(spawn, || 1, || -> u8 { panic!("there failed") })
            });
            let payload = r.expect_err("the panic must not be swallowed");
            assert_eq!(payload.downcast_ref::<&str>(), Some(&"there failed"));
        }
    }
}
