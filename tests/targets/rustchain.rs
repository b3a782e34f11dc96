// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// rustchain.rs: a Rust chain (a module, a generic) for demangling tests, legacy and v0.
mod chain {
    #[inline(never)]
    pub fn leaf(n: u64) -> u64 {
        let mut s = 1u64;
        for i in 0..n {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(i);
            // Keeps the loop: the optimizer may not fold it into a formula.
            unsafe { std::ptr::write_volatile(&mut s, s) };
        }
        s
    }

    #[inline(never)]
    pub fn level3(n: u64) -> u64 {
        leaf(n) ^ 3
    }

    #[inline(never)]
    pub fn level2<T: Into<u64>>(n: T) -> u64 {
        level3(n.into()) ^ 2
    }

    #[inline(never)]
    pub fn level1(n: u32) -> u64 {
        level2(n) ^ 1
    }
}

fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let start = std::time::Instant::now();
    let mut x = 0;
    while start.elapsed().as_secs_f64() < secs {
        x ^= chain::level1(2_000_000);
    }
    println!("{}", x);
}
