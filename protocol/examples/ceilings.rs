//! The machine's ceilings for record decoding: what "10 GB/s" and "50 M records/s" mean here.
//!
//! Measures, on one core, with this thread's CPU time (Linux; wall time elsewhere):
//! - the `crc32c` crate (the one kseek's batch check uses) over an L1-resident 16 KiB buffer
//!   and over a 256 MiB buffer (8x the last-level cache);
//! - a plain read pass over the same 256 MiB buffer (a sum of `u64`s): the memory bandwidth
//!   one core gets.
//!
//! Each figure is the best of `REPS` passes (default 7), so a neighbour's burst on this shared
//! machine lowers fewer of them. Run with
//! `cargo run --release -p kseek-protocol --example ceilings`.

use std::hint::black_box;

#[path = "support/clock.rs"]
mod clock;
use clock::Clock;

/// Best throughput (bytes/s) of `reps` runs of `f` over `bytes` bytes, each repeated `inner` times.
fn best(reps: usize, inner: usize, bytes: usize, mut f: impl FnMut()) -> f64 {
    let mut top = 0f64;
    for _ in 0..reps {
        let c = Clock::start();
        for _ in 0..inner {
            f();
        }
        let t = c.elapsed();
        top = top.max((bytes * inner) as f64 / t);
    }
    top
}

fn sum_u64(buf: &[u8]) -> u64 {
    // Four independent sums, so the adds are not one long dependency chain.
    let mut s = [0u64; 4];
    for c in buf.chunks_exact(32) {
        for (i, w) in c.chunks_exact(8).enumerate() {
            s[i] = s[i].wrapping_add(u64::from_le_bytes(w.try_into().unwrap_or_default()));
        }
    }
    s.iter().fold(0, |a, &b| a.wrapping_add(b))
}

fn main() {
    let reps: usize = std::env::var("REPS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(7);
    let small: Vec<u8> = (0..16 * 1024).map(|i| (i * 7 + 3) as u8).collect();
    let big: Vec<u8> = (0..256usize << 20).map(|i| (i * 7 + 3) as u8).collect();

    let crc_l1 = best(reps, 20_000, small.len(), || {
        black_box(crc32c::crc32c(black_box(&small)));
    });
    let crc_mem = best(reps, 1, big.len(), || {
        black_box(crc32c::crc32c(black_box(&big)));
    });
    let read_mem = best(reps, 1, big.len(), || {
        black_box(sum_u64(black_box(&big)));
    });
    let read_l1 = best(reps, 20_000, small.len(), || {
        black_box(sum_u64(black_box(&small)));
    });
    println!("crc32c, 16 KiB (L1):          {:6.2} GB/s", crc_l1 / 1e9);
    println!("crc32c, 256 MiB (memory):     {:6.2} GB/s", crc_mem / 1e9);
    println!("sum of u64s, 16 KiB (L1):     {:6.2} GB/s", read_l1 / 1e9);
    println!("sum of u64s, 256 MiB (memory): {:5.2} GB/s", read_mem / 1e9);
}
