//! Futures that wgpu's callbacks complete (buffer mappings, finished submissions), and
//! the two ways the crate drives its own futures: to the end on the calling thread
//! (native blocking entry points), or once, for those that never wait.

use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

/// What a [`Signal`] and its [`Sender`] share.
#[derive(Debug)]
struct State<T> {
    value: Option<T>,
    /// The sender was used or dropped.
    closed: bool,
    waker: Option<Waker>,
}

/// The end a callback holds: [`Sender::send`] completes the [`Signal`]; dropping it
/// unsent completes the signal with `None`.
#[derive(Debug)]
pub(crate) struct Sender<T> {
    state: Arc<Mutex<State<T>>>,
}

/// A future completed by its [`Sender`]: `Some(value)` once sent, `None` when the sender
/// was dropped without sending (a callback wgpu dropped uncalled).
#[derive(Debug)]
pub(crate) struct Signal<T> {
    state: Arc<Mutex<State<T>>>,
}

/// A new signal and the sender that completes it.
pub(crate) fn signal<T>() -> (Sender<T>, Signal<T>) {
    let state = Arc::new(Mutex::new(State {
        value: None,
        closed: false,
        waker: None,
    }));
    (
        Sender {
            state: Arc::clone(&state),
        },
        Signal { state },
    )
}

impl<T> Sender<T> {
    /// Completes the signal with `value` and wakes the task awaiting it.
    pub fn send(self, value: T) {
        self.close(Some(value));
    }

    fn close(&self, value: Option<T>) {
        let waker = {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            if state.closed {
                return;
            }
            state.closed = true;
            state.value = value;
            state.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        self.close(None);
    }
}

impl<T> Future for Signal<T> {
    type Output = Option<T>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.closed {
            return Poll::Ready(state.value.take());
        }
        state.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// Runs `future` to its end on this thread: what each native blocking entry point is,
/// over its `_async` twin.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn block_on<F: Future>(future: F) -> F::Output {
    pollster::block_on(future)
}

/// The output of a future polled once, or `None` if it would have waited: recording
/// into a caller's encoder shares its code with executions, which wait between batches,
/// but itself never waits.
pub(crate) fn at_once<F: Future>(future: F) -> Option<F::Output> {
    let mut future = pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(value) => Some(value),
        Poll::Pending => None,
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[test]
    fn a_signal_completes_with_what_is_sent_or_none_when_dropped() {
        let (sender, sent) = signal();
        let waiter = std::thread::spawn(move || block_on(sent));
        std::thread::sleep(std::time::Duration::from_millis(20));
        sender.send(7u32);
        assert_eq!(waiter.join().unwrap(), Some(7));
        let (sender, dropped) = signal::<u32>();
        drop(sender);
        assert_eq!(block_on(dropped), None);
        let (sender, early) = signal();
        sender.send("early");
        assert_eq!(at_once(early), Some(Some("early")));
        let (_sender, pending) = signal::<u32>();
        assert_eq!(at_once(pending), None);
    }
}
