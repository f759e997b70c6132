//! `kseek offsets`: the resolved plan, without reading.

use std::fmt::Write as _;

use kseek::{ClientConfig, Plan};

use crate::args::{OffsetsArgs, TableFormat};
use crate::fail::Fail;
use crate::output::{json_str, opt, print, table};

/// Runs `kseek offsets`: the resolved plan, without reading.
pub(crate) async fn run(config: &ClientConfig, args: OffsetsArgs, now: i64) -> Result<(), Fail> {
    let (_, _, plan) = super::resolve_selector(config, &args.select, now).await?;
    print(&render_plan(&plan, args.format))
}

fn render_plan(plan: &Plan, format: TableFormat) -> String {
    let records = |r: Option<u64>| r.map(|r| r as i64);
    match format {
        TableFormat::Json => {
            let mut out = String::new();
            for p in &plan.partitions {
                let _ = writeln!(
                    out,
                    "{{\"topic\":{},\"partition\":{},\"start\":{},\"end\":{},\"records\":{}}}",
                    json_str(&p.topic),
                    p.partition,
                    p.start,
                    opt(p.end, true),
                    opt(records(p.max_records()), true)
                );
            }
            out
        }
        TableFormat::Table => {
            let mut rows: Vec<Vec<String>> = plan
                .partitions
                .iter()
                .map(|p| {
                    vec![
                        p.topic.clone(),
                        p.partition.to_string(),
                        p.start.to_string(),
                        opt(p.end, false),
                        opt(records(p.max_records()), false),
                    ]
                })
                .collect();
            rows.push(vec![
                "total".to_owned(),
                String::new(),
                String::new(),
                String::new(),
                opt(records(plan.max_records()), false),
            ]);
            table(&["TOPIC", "PARTITION", "START", "END", "RECORDS"], &rows)
        }
    }
}

#[cfg(test)]
mod tests {
    use kseek::protocol::Uuid;
    use kseek::{IsolationLevel, PartitionPlan};

    use super::*;

    fn partition(topic: &str, partition: i32, start: i64, end: Option<i64>) -> PartitionPlan {
        PartitionPlan {
            topic: topic.into(),
            topic_id: Uuid::ZERO,
            partition,
            start,
            end,
            log_start_offset: 0,
            last_fetchable_offset: 100,
            leader_epoch: 0,
            adjusted: None,
        }
    }

    #[test]
    fn plans_as_tables_and_json() {
        let plan = Plan {
            partitions: vec![
                partition("t", 0, 10, Some(20)),
                partition("t", 1, 5, Some(5)),
            ],
            isolation: IsolationLevel::READ_UNCOMMITTED,
        };
        assert_eq!(
            render_plan(&plan, TableFormat::Table),
            "TOPIC  PARTITION  START  END  RECORDS\n\
             t      0          10     20   10\n\
             t      1          5      5    0\n\
             total                         10\n"
        );
        assert_eq!(
            render_plan(&plan, TableFormat::Json),
            "{\"topic\":\"t\",\"partition\":0,\"start\":10,\"end\":20,\"records\":10}\n\
             {\"topic\":\"t\",\"partition\":1,\"start\":5,\"end\":5,\"records\":0}\n"
        );
        let unbounded = Plan {
            partitions: vec![partition("t", 0, 10, None)],
            isolation: IsolationLevel::READ_UNCOMMITTED,
        };
        assert_eq!(
            render_plan(&unbounded, TableFormat::Json),
            "{\"topic\":\"t\",\"partition\":0,\"start\":10,\"end\":null,\"records\":null}\n"
        );
        assert!(render_plan(&unbounded, TableFormat::Table)
            .ends_with("total                         -\n"));
    }
}
