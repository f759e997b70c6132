//! Counts the allocations of `kseek read`'s record path (test builds of the binary only).
//!
//! The binary's unit tests are their own test binary, so a counting global allocator here
//! touches nothing else. It counts per thread: the test harness runs the other tests on other
//! threads at the same time.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use bytes::Bytes;
use kseek::protocol::records::{
    Compression, DecodeOptions, FilteredBatch, NewRecord, PartitionReader, RecordBatchBuilder,
};

use crate::output::{RecordFormat, RecordWriter};

/// The system allocator, counting allocations (and reallocations) per thread.
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn count_one() {
    // `try_with`: a thread being torn down still allocates, and then counts nothing.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

// SAFETY: every call is passed to `System` unchanged; counting touches only a const
// thread-local `Cell` (no allocation, no destructor).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: the caller's contract for `alloc`, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: the caller's contract for `alloc_zeroed`, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        // SAFETY: the caller's contract for `realloc`, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract for `dealloc`, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// How many times this thread allocated while running `f`.
fn allocations<T>(f: impl FnOnce() -> T) -> (u64, T) {
    let before = ALLOCATIONS.with(Cell::get);
    let out = f();
    (ALLOCATIONS.with(Cell::get) - before, out)
}

/// One batch of `n` records with keys, two headers (one null) and values; every third value
/// is not UTF-8 (base64 in JSON).
fn batch(n: i32, compression: Compression) -> FilteredBatch {
    let mut b = RecordBatchBuilder::new(1_000, 1_767_261_600_000).compression(compression);
    for i in 0..n {
        let value: &[u8] = if i % 3 == 0 {
            b"\xff\xfe not UTF-8 \x00"
        } else {
            b"{\"id\":17,\"name\":\"a \\\"quoted\\\" value\"}\n"
        };
        b.push(
            NewRecord::new(i, i64::from(i))
                .key(format!("key-{i}"))
                .value(value)
                .header("trace", "abc")
                .null_header("empty"),
        );
    }
    let bytes: Bytes = b.build().unwrap();
    let mut reader = PartitionReader::new(bytes, 0, DecodeOptions::default());
    reader.next().unwrap().unwrap()
}

/// The allocations of printing `batch` in `format` (to a sink), and how many records it
/// printed.
fn printing(format: &str, batch: &FilteredBatch) -> (u64, u64) {
    let format = RecordFormat::parse(format).unwrap();
    // The writer's buffer is set up once per read, not per record: outside the count.
    let mut w = RecordWriter::new(format, std::io::sink());
    let (n, printed) = allocations(|| w.write_batch("topic", 3, batch.records(), u64::MAX));
    w.flush().unwrap();
    (n, printed.unwrap().records)
}

#[test]
fn printing_records_allocates_nothing_per_record() {
    let formats = ["json", "raw", "", "%t %p %o %T %k %s %K %S %h\\n", "%s\\n"];
    for compression in [Compression::None, Compression::Lz4] {
        let (small, large) = (batch(10, compression), batch(10_000, compression));
        for format in formats {
            let (few, printed) = printing(format, &small);
            assert_eq!(printed, 10);
            let (many, printed) = printing(format, &large);
            assert_eq!(printed, 10_000);
            // The same number for 10 and for 10,000 records (none, in fact, today): no
            // allocation per record.
            assert_eq!(
                many, few,
                "format {format:?}, {compression:?}: {few} allocations for 10 records, {many} for 10,000"
            );
        }
    }
}

/// The counter does see per-record allocations: the owned copies `RecordStream` makes
/// (before this path existed, `kseek read` made them for every record).
#[test]
fn owned_copies_allocate_per_record_and_are_counted() {
    let (small, large) = (
        batch(10, Compression::None),
        batch(10_000, Compression::None),
    );
    let (few, _) = allocations(|| small.to_owned_records().unwrap());
    let (many, _) = allocations(|| large.to_owned_records().unwrap());
    assert!(
        many >= few + 9_990,
        "{few} for 10 records, {many} for 10,000"
    );
}
