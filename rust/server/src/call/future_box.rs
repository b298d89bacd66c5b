//! The box a call's future is polled in, kept per thread from one call to the next.
//!
//! A call's future is a couple of kilobytes (everything the checkpoint and the handler may
//! wait on), boxed so that a call that has to wait can move to a task of its own. A block that
//! size is past the allocator's small sizes: getting one takes the allocator's slow path, and
//! first merges every small block freed since, which cost an inline call (a Rust handler that
//! answers at once) more than any other single step of it. A call that is over leaves its
//! box, empty, to the next call on the thread it ended on, whether it finished inline or in a
//! task of its own (a Java handler's call).
//!
//! The future's type has no name, so the kept box is held as `dyn Any` and found again by its
//! type: a box of another type (none today) is simply not reused.

use std::any::Any;
use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A future in a box of its own, or the empty box once it is done.
pub(crate) type FutureBox<F> = Pin<Box<Option<F>>>;

thread_local! {
    /// An `Option<FutureBox<F>>`: the outer box stays, and the future's box moves in and out.
    static KEPT: RefCell<Option<Box<dyn Any>>> = const { RefCell::new(None) };
}

/// The future `make` makes, in a box: the one the last call over on this thread left, or a
/// new one. Made where it is kept: a future made first and then moved into its box was copied
/// whole (the few hundred bytes of its arguments, and the rest of its kilobytes with them).
pub(crate) fn boxed<F: Future + 'static>(make: impl FnOnce() -> F) -> FutureBox<F> {
    let kept = KEPT
        .try_with(|kept| {
            let mut kept = kept.try_borrow_mut().ok()?;
            kept.as_mut()?
                .downcast_mut::<Option<FutureBox<F>>>()?
                .take()
        })
        .ok()
        .flatten();
    match kept {
        Some(mut slot) => {
            slot.set(Some(make()));
            slot
        }
        None => Box::pin(Some(make())),
    }
}

/// Polls the future in `slot`; an empty box is a finished future.
pub(crate) fn poll<F: Future>(
    slot: Pin<&mut Option<F>>,
    context: &mut Context<'_>,
) -> Poll<F::Output>
where
    F::Output: Default,
{
    match slot.as_pin_mut() {
        Some(future) => future.poll(context),
        None => Poll::Ready(F::Output::default()),
    }
}

/// Empties `slot` (its future finished) and keeps the box for the next call on this thread.
pub(crate) fn keep<F: Future + 'static>(mut slot: FutureBox<F>) {
    slot.set(None);
    let _ = KEPT.try_with(|kept| {
        let Ok(mut kept) = kept.try_borrow_mut() else {
            return;
        };
        match kept
            .as_mut()
            .and_then(|kept| kept.downcast_mut::<Option<FutureBox<F>>>())
        {
            Some(place) => *place = Some(slot),
            None => *kept = Some(Box::new(Some(slot))),
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn answer(value: u32, seen: std::rc::Rc<std::cell::Cell<u32>>) {
        seen.set(value);
    }

    fn address<F>(slot: &FutureBox<F>) -> *const Option<F> {
        &**slot
    }

    #[test]
    fn a_finished_future_leaves_its_box_to_the_next_one_on_the_thread() {
        let seen = std::rc::Rc::new(std::cell::Cell::new(0));
        let waker = std::task::Waker::noop();
        let mut context = Context::from_waker(waker);
        let mut first = boxed(|| answer(1, seen.clone()));
        assert!(poll(first.as_mut(), &mut context).is_ready());
        assert_eq!(seen.get(), 1);
        let first_address = address(&first);
        keep(first);
        let mut second = boxed(|| answer(2, seen.clone()));
        assert_eq!(address(&second), first_address, "the box is reused");
        assert!(poll(second.as_mut(), &mut context).is_ready());
        assert_eq!(seen.get(), 2);
        // A second box while one is out: a new one, and both can be kept (the last stays).
        let third = boxed(|| answer(3, seen.clone()));
        assert_ne!(address(&third), first_address);
        keep(second);
        keep(third);
        // An empty box polls as finished.
        let mut empty = boxed(|| answer(4, seen.clone()));
        empty.set(None);
        assert!(poll(empty.as_mut(), &mut context).is_ready());
        assert_eq!(seen.get(), 2);
    }
}
