//! `kseek splits`: the plan cut into splits, one JSON line each (`kseek_arrow::Split`), for
//! `kseek read-split` to read elsewhere.

use kseek::read::TimeFilter;
use kseek::ClientConfig;
use kseek_arrow::Split;

use crate::args::SplitsArgs;
use crate::fail::Fail;

/// Runs `kseek splits`.
pub(crate) async fn run(config: &ClientConfig, args: SplitsArgs, now: i64) -> Result<(), Fail> {
    let (client, spec, plan) = super::resolve_selector(config, &args.select, now).await?;
    let filter = TimeFilter::from_spec(&spec).filter(|_| args.exact_time);
    let mut pieces = match args.max_bytes {
        Some(max_bytes) => {
            let sizes = client.log_sizes(&plan).await.map_err(|e| {
                Fail::kafka("describing the partitions' log sizes for --max-bytes", &e)
            })?;
            plan.splits_by_bytes(max_bytes, &sizes)
        }
        None => vec![plan],
    };
    if let Some(max_offsets) = args.max_offsets {
        pieces = pieces.iter().flat_map(|p| p.splits(max_offsets)).collect();
    }
    let mut text = String::new();
    for split in Split::of_plans(&pieces, config, filter) {
        text.push_str(&split.to_json());
        text.push('\n');
    }
    crate::output::print(&text)
}
