//! A vector filled on two threads at once, each thread writing its own half of the
//! vector's memory in place ([`fill_in_halves`]). Moving 100k large items into a fresh
//! vector on one thread spends much of its time in the page faults of that vector's
//! first touch; split this way, both cores take them.

use std::mem::MaybeUninit;

/// One thread's half of a vector being filled by [`fill_in_halves`]: each push writes
/// the next slot of that half.
#[derive(Debug)]
pub struct Half<'a, T> {
    slots: &'a mut [MaybeUninit<T>],
    filled: usize,
}

impl<T> Half<'_, T> {
    /// Writes `value` to the next slot of this half. Panics when the half is full.
    pub fn push(&mut self, value: T) {
        self.slots[self.filled].write(value);
        self.filled += 1;
    }
}

/// Builds a vector of `first + second` items: `fill_first` pushes the first `first` of
/// them, on this thread, while `fill_second` pushes the other `second` on a second one
/// (on this thread afterwards, when none can be had). Returns the vector and what each
/// closure returned.
///
/// Panics when a closure panics (the items pushed are then leaked, not dropped), or
/// when either pushes other than its count of items.
pub fn fill_in_halves<T, A, B>(
    first: usize,
    second: usize,
    fill_first: impl FnOnce(&mut Half<'_, T>) -> A,
    fill_second: impl FnOnce(&mut Half<'_, T>) -> B + Send,
) -> (Vec<T>, A, B)
where
    T: Send,
    B: Send,
{
    let len = first + second;
    let mut vec: Vec<T> = Vec::with_capacity(len);
    let (a_slots, b_slots) = vec.spare_capacity_mut()[..len].split_at_mut(first);
    let mut a = Half {
        slots: a_slots,
        filled: 0,
    };
    let mut b = Half {
        slots: b_slots,
        filled: 0,
    };
    let (ra, rb) = super::at_once::at_once(|| fill_first(&mut a), || fill_second(&mut b));
    assert!(
        a.filled == first && b.filled == second,
        "fill_in_halves: {} of {first} and {} of {second} items pushed",
        a.filled,
        b.filled
    );
    // SAFETY: the first `first` slots of the spare capacity were written by `a`, and the
    // next `second` by `b`, each in order from its first slot (`Half::push` writes the
    // slot at `filled` and then counts it), and both counts are full.
    unsafe { vec.set_len(len) };
    (vec, ra, rb)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_halves_land_in_order() {
        let (v, a, b) = fill_in_halves(
            3,
            2,
            |h| {
                for s in ["a", "b", "c"] {
                    h.push(s.to_string());
                }
                std::thread::current().id()
            },
            |h| {
                for s in ["d", "e"] {
                    h.push(s.to_string());
                }
                std::thread::current().id()
            },
        );
        assert_eq!(v, ["a", "b", "c", "d", "e"]);
        assert_ne!(a, b, "the halves are filled on two threads");
        let (v, (), ()) = fill_in_halves::<u8, _, _>(0, 0, |_| (), |_| ());
        assert!(v.is_empty());
    }

    #[test]
    fn a_wrong_count_panics_without_exposing_unwritten_slots() {
        let short =
            std::panic::catch_unwind(|| fill_in_halves(2, 1, |h| h.push(1u64), |h| h.push(2u64)));
        assert!(short.is_err());
        let long = std::panic::catch_unwind(|| {
            fill_in_halves(
                1,
                1,
                |h| h.push(1u64),
                |h| {
                    h.push(2u64);
                    h.push(3u64);
                },
            )
        });
        assert!(long.is_err());
    }
}
