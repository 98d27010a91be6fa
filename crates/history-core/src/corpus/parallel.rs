//! Decoding sessions on every core while consuming the results in order, so that an overview can
//! stop as soon as it has enough.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How many workers to run: the number of cores, or one inside a worker already (the work of
/// an item that is itself shared out runs on the thread the item runs on).
pub fn workers() -> usize {
    match WORKING.get() {
        true => 1,
        // Asked once: on Linux each answer reads the cgroup's quota files again.
        false => *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
    }
}

static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();

thread_local! {
    /// Whether this thread is running an item of [`map`] or [`ordered_map`].
    static WORKING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` as a worker ([`WORKING`]), as it was before afterwards.
pub(crate) fn working<R>(f: impl FnOnce() -> R) -> R {
    let was = WORKING.replace(true);
    let r = f();
    WORKING.set(was);
    r
}

/// Runs `work` over `items` on [`workers`] threads and hands each result to `consume` in item
/// order. When `consume` returns `false`, no further item is started.
pub fn ordered_map<'a, T, R>(
    items: &'a [T],
    work: impl Fn(&'a T) -> R + Sync,
    mut consume: impl FnMut(&'a T, R) -> bool,
) where
    T: Sync,
    R: Send,
{
    let threads = workers().min(items.len());
    if threads <= 1 {
        for item in items {
            if !consume(item, work(item)) {
                return;
            }
        }
        return;
    }
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<(usize, R)>();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let tx = tx.clone();
            let (next, stop, work) = (&next, &stop, &work);
            scope.spawn(move || loop {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                if tx.send((i, working(|| work(item)))).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let mut pending = BTreeMap::new();
        let mut expected = 0;
        for (i, r) in rx.iter() {
            pending.insert(i, r);
            while let Some(r) = pending.remove(&expected) {
                if !consume(&items[expected], r) {
                    stop.store(true, Ordering::Relaxed);
                    return;
                }
                expected += 1;
            }
        }
    });
}

/// [`map`], keeping the results that are `Some`, in item order. Each worker keeps only its
/// `Some` results, merged into one vector at the end: no vector of every result grows by
/// copies, nor is copied again to leave out the `None`s.
pub fn filter_map<'a, T, R>(items: &'a [T], work: impl Fn(&'a T) -> Option<R> + Sync) -> Vec<R>
where
    T: Sync,
    R: Send,
{
    spread(items, work, false)
}

/// [`filter_map`] for items that each take microseconds (a stat, a comparison of fingerprints):
/// the calling thread works alone until the pace of its first items says that the rest is worth
/// the other threads' start. A thread takes about 50 µs to start and join on the 2-core
/// machine the bench runs on, where a query's discovery of 866 files took 2.3 ms on both cores
/// and 2.0 ms on one.
pub fn filter_map_quick<'a, T, R>(
    items: &'a [T],
    work: impl Fn(&'a T) -> Option<R> + Sync,
) -> Vec<R>
where
    T: Sync,
    R: Send,
{
    spread(items, work, true)
}

/// [`map`] for quick items, as [`filter_map_quick`].
pub fn map_quick<'a, T, R>(items: &'a [T], work: impl Fn(&'a T) -> R + Sync) -> Vec<R>
where
    T: Sync,
    R: Send,
{
    spread(items, |item| Some(work(item)), true)
}

/// How long the calling thread works alone before it judges whether to share the rest.
const ALONE: Duration = Duration::from_micros(100);

/// How much work, at the pace so far, is worth sharing: some twenty times what starting a
/// thread costs.
const WORTH_SHARING: Duration = Duration::from_millis(1);

/// Whether `taken` of `items` items having taken `spent` leaves enough to share.
fn worth_sharing(spent: Duration, taken: usize, items: usize) -> bool {
    spent >= ALONE
        && spent.as_nanos() * (items - taken) as u128 >= WORTH_SHARING.as_nanos() * taken as u128
}

/// [`filter_map`], or with `quick` [`filter_map_quick`].
fn spread<'a, T, R>(items: &'a [T], work: impl Fn(&'a T) -> Option<R> + Sync, quick: bool) -> Vec<R>
where
    T: Sync,
    R: Send,
{
    let threads = workers().min(items.len());
    if threads <= 1 {
        return items.iter().filter_map(work).collect();
    }
    let next = AtomicUsize::new(0);
    // Takes the next item, if any is left.
    let take = |done: &mut Vec<(usize, R)>| -> bool {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(item) = items.get(i) else {
            return false;
        };
        if let Some(r) = working(|| work(item)) {
            done.push((i, r));
        }
        true
    };
    let run = || {
        // Room for its share from the start: only what it fills takes memory.
        let mut done = Vec::with_capacity(items.len().div_ceil(threads));
        while take(&mut done) {}
        done
    };
    let mut alone = Vec::new();
    if quick {
        let started = Instant::now();
        let mut taken = 0;
        loop {
            if !take(&mut alone) {
                return alone.into_iter().map(|(_, r)| r).collect();
            }
            taken += 1;
            if worth_sharing(started.elapsed(), taken, items.len()) {
                break;
            }
        }
    }
    let parts = std::thread::scope(|scope| {
        let others: Vec<_> = (1..threads).map(|_| scope.spawn(run)).collect();
        let mut parts = vec![alone, run()];
        for other in others {
            match other.join() {
                Ok(done) => parts.push(done),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        parts
    });
    merge(parts)
}

/// The results of `parts`, each in item order, in item order.
fn merge<R>(parts: Vec<Vec<(usize, R)>>) -> Vec<R> {
    let mut out = Vec::with_capacity(parts.iter().map(Vec::len).sum());
    let mut parts: Vec<_> = parts
        .into_iter()
        .map(|p| p.into_iter().peekable())
        .collect();
    loop {
        let first = (parts.iter_mut().enumerate())
            .filter_map(|(k, p)| Some((p.peek()?.0, k)))
            .min();
        match first {
            Some((_, k)) => out.extend(parts[k].next().map(|(_, r)| r)),
            None => return out,
        }
    }
}

/// Runs `work` over every item on [`workers`] threads (the calling one among them) and returns
/// the results in item order. Cheaper than [`ordered_map`] when every item is wanted: no thread
/// waits on another before the end.
pub fn map<'a, T, R>(items: &'a [T], work: impl Fn(&'a T) -> R + Sync) -> Vec<R>
where
    T: Sync,
    R: Send,
{
    filter_map(items, |item| Some(work(item)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_order_and_stops() {
        let items: Vec<u32> = (0..100).collect();
        let mut seen = vec![];
        ordered_map(
            &items,
            |x| x * 2,
            |_, r| {
                seen.push(r);
                seen.len() < 10
            },
        );
        assert_eq!(seen, (0..10).map(|x| x * 2).collect::<Vec<_>>());
    }

    #[test]
    fn filter_map_keeps_the_order_of_what_it_keeps() {
        let items: Vec<u32> = (0..1000).collect();
        let kept = |x: &u32| x.is_multiple_of(3).then_some(x * 2);
        assert_eq!(
            filter_map(&items, kept),
            items.iter().filter_map(kept).collect::<Vec<_>>()
        );
        assert_eq!(filter_map(&items, |_| None::<u32>), Vec::<u32>::new());
    }

    #[test]
    fn map_keeps_the_order() {
        let items: Vec<u32> = (0..1000).collect();
        assert_eq!(
            map(&items, |x| x * 3),
            (0..1000).map(|x| x * 3).collect::<Vec<_>>()
        );
    }

    #[test]
    fn quick_items_keep_their_order_whether_shared_or_not() {
        let items: Vec<u32> = (0..1000).collect();
        let kept = |x: &u32| x.is_multiple_of(3).then_some(x * 2);
        let expected: Vec<u32> = items.iter().filter_map(kept).collect();
        assert_eq!(filter_map_quick(&items, kept), expected);
        // Slow enough to be shared: what the calling thread took alone comes first.
        let slow = |x: &u32| {
            std::thread::sleep(Duration::from_micros(20));
            kept(x)
        };
        assert_eq!(filter_map_quick(&items, slow), expected);
        assert_eq!(
            map_quick(&items, |x| x * 3),
            (0..1000).map(|x| x * 3).collect::<Vec<_>>()
        );
    }

    #[test]
    fn quick_items_are_shared_only_when_the_rest_is_worth_a_thread() {
        // 400 items of 100 µs: 40 ms, on every core.
        let items: Vec<u32> = (0..400).collect();
        let ids = map_quick(&items, |_| {
            std::thread::sleep(Duration::from_micros(100));
            format!("{:?}", std::thread::current().id())
        });
        let threads: std::collections::BTreeSet<String> = ids.into_iter().collect();
        assert!(threads.len() >= workers().min(2), "{threads:?}");
        // Whether to share is judged from the pace of the first items, after 100 µs.
        assert!(!worth_sharing(Duration::from_micros(99), 1, 1_000_000));
        assert!(!worth_sharing(Duration::from_micros(200), 100, 500));
        assert!(worth_sharing(Duration::from_micros(200), 100, 1000));
    }

    #[test]
    fn work_shared_out_inside_an_item_stays_on_its_thread() {
        let cores = workers();
        let items: Vec<u32> = (0..64).collect();
        let inner = map(&items, |_| {
            let here = std::thread::current().id();
            let threads = map(&items, |_| std::thread::current().id());
            (workers(), threads.iter().all(|&t| t == here))
        });
        assert!(inner.iter().all(|&(n, same)| n == 1 && same), "{inner:?}");
        assert_eq!(workers(), cores);
    }
}
