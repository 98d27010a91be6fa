//! A small deterministic PRNG (splitmix64): the corpus must be a pure function of its seed.

/// A splitmix64 stream.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A stream for `seed`.
    pub fn new(seed: u64) -> Rng {
        let mut r = Rng(seed ^ 0x6a09_e667_f3bc_c908);
        r.next();
        r
    }

    /// An independent stream for a sub-task, so that tasks can run in any order.
    pub fn derive(&self, tag: u64) -> Rng {
        Rng::new(self.0 ^ tag.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17))
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next() as u128 * n as u128) >> 64) as u64
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// Log-uniform in `lo..hi`: many small values, a long tail of large ones.
    pub fn log_uniform(&mut self, lo: u64, hi: u64) -> u64 {
        let (lo, hi) = (lo.max(1) as f64, hi.max(lo + 1) as f64);
        (lo * (hi / lo).powf(self.unit())) as u64
    }

    /// Like [`Rng::log_uniform`] but skewed further towards `lo`: most values small, a few near
    /// `hi` (session sizes: many short sessions, a handful of long ones).
    pub fn long_tail(&mut self, lo: u64, hi: u64) -> u64 {
        let (lo, hi) = (lo.max(1) as f64, hi.max(lo + 1) as f64);
        let u = self.unit();
        (lo * (hi / lo).powf(u * u)) as u64
    }

    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }

    /// An index skewed towards the front (a few favourites, a long tail).
    pub fn skewed(&mut self, n: usize) -> usize {
        let u = self.unit();
        ((u * u * n as f64) as usize).min(n - 1)
    }
}
