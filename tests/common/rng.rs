//! A small seeded generator (SplitMix64) for the reliability suites: the
//! seed comes from `TOLLGATE_TEST_SEED` when set, else from the clock, and
//! is printed so a failing run can be replayed exactly.
#![allow(dead_code)]

pub struct Rng(u64);

impl Rng {
    /// The generator for `suite`, its seed printed (nextest shows the
    /// output of failing tests).
    pub fn seeded(suite: &str) -> Rng {
        let seed = std::env::var("TOLLGATE_TEST_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos() as u64)
                    .unwrap_or(1)
            });
        println!("{suite}: seed {seed} (replay with TOLLGATE_TEST_SEED={seed})");
        Rng(seed)
    }

    pub fn with_seed(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `low..high` (`high > low`).
    pub fn range(&mut self, low: u64, high: u64) -> u64 {
        low + self.next_u64() % (high - low)
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.range(0, 100) < percent
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.range(0, items.len() as u64) as usize]
    }
}
