//! Uncompressed record iteration allocates nothing per record.
//!
//! A counting global allocator wraps the system one; the test decodes a batch of many
//! records (with headers) and checks that iterating every record, key, value and header
//! performed no allocation, and that every slice handed out lies inside the input buffer.
//! It is its own test binary so the allocator is ours, and the counter is thread-local so
//! the harness (or another test) allocating concurrently cannot disturb it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use bytes::Bytes;
use kseek_protocol::records::{
    Batches, DecodeOptions, NewRecord, PartitionReader, RecordBatchBuilder,
};

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged; the only
// extra work is bumping a thread-local counter, which does not allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: forwarded unchanged; the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged; `ptr` came from `System` via `alloc`/`realloc`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: forwarded unchanged; the caller upholds `GlobalAlloc::realloc`'s contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

fn input(records: i32) -> Bytes {
    let mut wire = Vec::new();
    for batch in 0..4 {
        let base = i64::from(batch * records);
        let mut b = RecordBatchBuilder::new(base, 1_700_000_000_000);
        for i in 0..records {
            b.push(
                NewRecord::new(i, i64::from(i))
                    .key(format!("key-{i}"))
                    .value(vec![b'v'; 100 + (i as usize % 50)])
                    .header("trace", format!("t{i}"))
                    .null_header("n"),
            );
        }
        wire.extend_from_slice(&b.build().unwrap());
    }
    Bytes::from(wire)
}

fn inside(buf: &Bytes, s: &[u8]) -> bool {
    let start = buf.as_ptr() as usize;
    let p = s.as_ptr() as usize;
    p >= start && p + s.len() <= start + buf.len()
}

#[test]
fn uncompressed_iteration_allocates_nothing_per_record() {
    let buf = input(500);
    let mut touched = 0usize;
    let mut seen = 0usize;

    // The first clone of a `Bytes` made from a `Vec` allocates its shared header once;
    // that is per buffer, not per record, so it happens before counting starts.
    let batches = Batches::new(buf.clone(), DecodeOptions::default());
    let before = allocations();
    for batch in batches {
        let batch = batch.unwrap();
        let records = batch.records().unwrap();
        for r in &records {
            let r = r.unwrap();
            let key = r.key().unwrap();
            let value = r.value().unwrap();
            assert!(inside(&buf, key) && inside(&buf, value));
            touched += key.len() + value.len();
            for h in r.headers() {
                assert!(inside(&buf, h.key()));
                if let Some(v) = h.value() {
                    assert!(inside(&buf, v));
                }
                touched += h.key().len();
            }
            seen += 1;
        }
    }
    let during = allocations() - before;
    assert_eq!(seen, 2_000);
    assert!(touched > 200_000);
    assert_eq!(
        during, 0,
        "{during} allocations while iterating {seen} records"
    );

    // The reader path: its heap and producer set are empty under read_uncommitted, so it
    // too allocates nothing while iterating.
    let mut reader = PartitionReader::new(buf.clone(), 10, DecodeOptions::default());
    let before = allocations();
    let mut n = 0;
    for batch in &mut reader {
        for r in &batch.unwrap() {
            let r = r.unwrap();
            assert!(inside(&buf, r.value().unwrap()));
            n += 1;
        }
    }
    let during = allocations() - before;
    assert_eq!(n, 1_990);
    assert_eq!(reader.next_offset(), 2_000);
    assert_eq!(during, 0, "{during} allocations in PartitionReader");
}

#[test]
fn the_counter_counts() {
    // Guards the test above against a counter that never moves.
    let before = allocations();
    let v = std::hint::black_box(vec![1u8; 64]);
    assert!(allocations() > before);
    drop(v);
}
