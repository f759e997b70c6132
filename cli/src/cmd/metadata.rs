//! `kseek metadata`: brokers, topics, partitions and their leaders.

use std::fmt::Write as _;

use kseek::{ClientConfig, ClusterMetadata};

use crate::args::{MetadataArgs, TableFormat};
use crate::fail::Fail;
use crate::output::{json_str, opt, print, table};

/// Runs `kseek metadata`.
pub(crate) async fn run(config: &ClientConfig, args: MetadataArgs) -> Result<(), Fail> {
    super::check_names("topic", &args.topic)?;
    let client = super::connect(config).await?;
    let mut cluster = client
        .cluster_metadata()
        .await
        .map_err(|e| Fail::kafka("fetching the cluster metadata", &e))?;
    if !args.topic.is_empty() {
        // Served from the cache the answer above filled; a topic missing from it is the
        // library's to wait for (a topic just created) and to report.
        cluster.topics = client
            .metadata(&kseek::position::distinct(&args.topic))
            .await
            .map_err(|e| Fail::kafka("fetching the topics' metadata", &e))?;
    }
    print(&render_metadata(&cluster, args.format))
}

fn render_metadata(cluster: &ClusterMetadata, format: TableFormat) -> String {
    let is_controller = |id: i32| cluster.controller_id == Some(id);
    let error = |code: kseek::protocol::ErrorCode| {
        (!code.is_ok()).then(|| {
            code.name()
                .map_or_else(|| code.0.to_string(), str::to_owned)
        })
    };
    match format {
        TableFormat::Json => {
            let brokers: Vec<String> = cluster
                .brokers
                .iter()
                .map(|b| {
                    format!(
                        "{{\"id\":{},\"host\":{},\"port\":{},\"rack\":{},\"controller\":{}}}",
                        b.node_id,
                        json_str(&b.host),
                        b.port,
                        b.rack
                            .as_deref()
                            .map_or_else(|| "null".to_owned(), json_str),
                        is_controller(b.node_id)
                    )
                })
                .collect();
            let topics: Vec<String> = cluster
                .topics
                .iter()
                .map(|t| {
                    let partitions: Vec<String> = t
                        .partitions
                        .iter()
                        .map(|p| {
                            format!(
                                "{{\"partition\":{},\"leader\":{},\"leader_epoch\":{},\"error\":{}}}",
                                p.partition,
                                p.leader_id,
                                p.leader_epoch,
                                error(p.error_code).map_or_else(|| "null".to_owned(), |e| json_str(&e))
                            )
                        })
                        .collect();
                    format!(
                        "{{\"topic\":{},\"partitions\":[{}]}}",
                        json_str(&t.name),
                        partitions.join(",")
                    )
                })
                .collect();
            format!(
                "{{\"cluster_id\":{},\"controller_id\":{},\"brokers\":[{}],\"topics\":[{}]}}\n",
                cluster
                    .cluster_id
                    .as_deref()
                    .map_or_else(|| "null".to_owned(), json_str),
                opt(cluster.controller_id.map(i64::from), true),
                brokers.join(","),
                topics.join(",")
            )
        }
        TableFormat::Table => {
            let brokers: Vec<Vec<String>> = cluster
                .brokers
                .iter()
                .map(|b| {
                    vec![
                        b.node_id.to_string(),
                        format!("{}:{}", b.host, b.port),
                        if is_controller(b.node_id) {
                            "controller"
                        } else {
                            ""
                        }
                        .to_owned(),
                    ]
                })
                .collect();
            let mut partitions = Vec::new();
            for t in &cluster.topics {
                for p in &t.partitions {
                    partitions.push(vec![
                        t.name.clone(),
                        p.partition.to_string(),
                        if p.leader_id < 0 {
                            "none".to_owned()
                        } else {
                            p.leader_id.to_string()
                        },
                        p.leader_epoch.to_string(),
                        error(p.error_code).unwrap_or_default(),
                    ]);
                }
            }
            let mut out = String::new();
            if let Some(id) = &cluster.cluster_id {
                let _ = writeln!(out, "cluster {id}\n");
            }
            out.push_str(&table(&["BROKER", "ADDRESS", ""], &brokers));
            out.push('\n');
            out.push_str(&table(
                &["TOPIC", "PARTITION", "LEADER", "EPOCH", ""],
                &partitions,
            ));
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use kseek::protocol::messages::metadata::{
        MetadataResponse, MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
    };
    use kseek::protocol::ErrorCode;

    use super::*;

    #[test]
    fn metadata_as_tables_and_json() {
        // As a broker's Metadata answer gives it (ClusterMetadata's fields can't be set one
        // by one outside the library: it may grow).
        let partition =
            |partition_index, leader_id, leader_epoch, error_code| MetadataResponsePartition {
                partition_index,
                leader_id,
                leader_epoch,
                error_code,
                ..Default::default()
            };
        let cluster = ClusterMetadata::from(MetadataResponse {
            cluster_id: Some("c1".into()),
            controller_id: 1,
            brokers: vec![MetadataResponseBroker {
                node_id: 1,
                host: "h".into(),
                port: 9092,
                rack: None,
                ..Default::default()
            }],
            topics: vec![MetadataResponseTopic {
                name: Some("t".into()),
                partitions: vec![
                    partition(0, 1, 3, ErrorCode::NONE.0),
                    partition(1, -1, 4, ErrorCode::LEADER_NOT_AVAILABLE.0),
                ],
                ..Default::default()
            }],
            ..Default::default()
        });
        assert_eq!(
            render_metadata(&cluster, TableFormat::Table),
            "cluster c1\n\n\
             BROKER  ADDRESS\n\
             1       h:9092   controller\n\n\
             TOPIC  PARTITION  LEADER  EPOCH\n\
             t      0          1       3\n\
             t      1          none    4      LEADER_NOT_AVAILABLE\n"
        );
        assert_eq!(
            render_metadata(&cluster, TableFormat::Json),
            "{\"cluster_id\":\"c1\",\"controller_id\":1,\"brokers\":[{\"id\":1,\"host\":\"h\",\"port\":9092,\"rack\":null,\"controller\":true}],\
             \"topics\":[{\"topic\":\"t\",\"partitions\":[{\"partition\":0,\"leader\":1,\"leader_epoch\":3,\"error\":null},\
             {\"partition\":1,\"leader\":-1,\"leader_epoch\":4,\"error\":\"LEADER_NOT_AVAILABLE\"}]}]}\n"
        );
    }
}
