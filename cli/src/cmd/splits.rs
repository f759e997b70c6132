//! `kseek splits`: the plan cut into splits, one JSON line each (`kseek_arrow::Split`), for
//! `kseek read-split` to read elsewhere.

use kseek::read::TimeFilter;
use kseek::ClientConfig;
use kseek_arrow::Split;

use crate::args::SplitsArgs;
use crate::fail::Fail;

/// Runs `kseek splits`.
pub(crate) async fn run(config: &ClientConfig, args: SplitsArgs, now: i64) -> Result<(), Fail> {
    let (_client, spec, plan) = super::resolve_selector(config, &args.select, now).await?;
    let filter = TimeFilter::from_spec(&spec).filter(|_| args.exact_time);
    let mut text = String::new();
    for split in Split::of_plan(&plan, args.max_offsets, config, filter) {
        text.push_str(&split.to_json());
        text.push('\n');
    }
    crate::output::print(&text)
}
