//! One simulated broker connection: reads request frames and answers them from the shared
//! [`WireCluster`], applying the fault scheduled for each request.
//!
//! Requests are decoded with kseek-protocol's own types (request header, then the body at the
//! version in the header) and answered at the same version. The brokers advertise every
//! version kseek supports, except Fetch up to v12 (topics by name), FindCoordinator up to v3, OffsetFetch up to v7 and
//! OffsetCommit up to v8 (the single-group, by-name layouts, which kseek also speaks).
//!
//! When the cluster has PLAIN credentials ([`WireCluster::sasl`]), a connection must pass
//! SaslHandshake and SaslAuthenticate before anything but ApiVersions, as on a broker's
//! SASL_PLAINTEXT listener; any other request before that closes the connection.

use std::sync::{Arc, Mutex};

use bytes::{Bytes, BytesMut};
use kseek_protocol::messages::api_versions::{ApiVersion, ApiVersionsRequest, ApiVersionsResponse};
use kseek_protocol::messages::fetch::FetchRequest;
use kseek_protocol::messages::find_coordinator::{FindCoordinatorRequest, FindCoordinatorResponse};
use kseek_protocol::messages::list_offsets::{
    ListOffsetsPartitionResponse, ListOffsetsRequest, ListOffsetsResponse, ListOffsetsTopicResponse,
};
use kseek_protocol::messages::metadata::{
    MetadataRequest, MetadataResponse, MetadataResponseBroker, MetadataResponsePartition,
    MetadataResponseTopic,
};
use kseek_protocol::messages::offset_commit::{
    OffsetCommitRequest, OffsetCommitResponse, OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
};
use kseek_protocol::messages::offset_fetch::{
    OffsetFetchRequest, OffsetFetchResponse, OffsetFetchResponsePartition, OffsetFetchResponseTopic,
};
use kseek_protocol::messages::sasl_authenticate::{
    SaslAuthenticateRequest, SaslAuthenticateResponse,
};
use kseek_protocol::messages::sasl_handshake::{SaslHandshakeRequest, SaslHandshakeResponse};
use kseek_protocol::negotiate::SUPPORTED_APIS;
use kseek_protocol::{decode_exact, ApiKey, ErrorCode, Message, Request, RequestHeader};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

use super::{Fault, SaslFault, WireCluster, WIRE_TOPIC};

/// Serves one connection to broker `node` until the client closes it or a fault does.
pub(super) async fn serve(state: Arc<Mutex<WireCluster>>, node: i32, mut sock: DuplexStream) {
    let mut authenticated = false;
    loop {
        let mut len = [0u8; 4];
        if sock.read_exact(&mut len).await.is_err() {
            return;
        }
        let mut frame = vec![0u8; u32::from_be_bytes(len) as usize];
        if sock.read_exact(&mut frame).await.is_err() {
            return;
        }
        if state.lock().unwrap().frozen.contains(&node) {
            // Holds the connection open, reading nothing more, answering nothing.
            return std::future::pending().await;
        }
        let (answer, hold) = {
            let mut cluster = state.lock().unwrap();
            let answer = handle(&mut cluster, node, &mut authenticated, Bytes::from(frame));
            (answer, std::mem::take(&mut cluster.hold))
        };
        if !hold.is_zero() {
            tokio::time::sleep(hold).await;
        }
        let Some(answer) = answer else {
            return; // dropping `sock` closes the connection
        };
        let mut out = (answer.len() as i32).to_be_bytes().to_vec();
        out.extend_from_slice(&answer);
        if sock.write_all(&out).await.is_err() {
            return;
        }
    }
}

/// The answer to one request frame (without its size), or `None` to close the connection.
/// `authenticated` says whether this connection passed SASL.
fn handle(
    cluster: &mut WireCluster,
    node: i32,
    authenticated: &mut bool,
    frame: Bytes,
) -> Option<Bytes> {
    let api_key = ApiKey(i16::from_be_bytes([frame[0], frame[1]]));
    let fault = cluster.take_fault();
    if fault == Some(Fault::CloseBefore) {
        return None;
    }
    let sasl_api = api_key == ApiKey::SASL_HANDSHAKE || api_key == ApiKey::SASL_AUTHENTICATE;
    if cluster.sasl.is_some() && !*authenticated && !sasl_api && api_key != ApiKey::API_VERSIONS {
        return None;
    }
    if let Some((bad, how)) = cluster.bad_sasl {
        // Either way the handshake was answered; SaslAuthenticate never is.
        if bad == node && api_key == ApiKey::SASL_AUTHENTICATE {
            if how == SaslFault::MidAuthenticate {
                // Half an answer: the size prefix promises more than ever comes.
                return Some(Bytes::from_static(&[0, 0]));
            }
            return None;
        }
    }
    let answer = match api_key {
        ApiKey::API_VERSIONS => answer::<ApiVersionsRequest>(frame, |_, _| api_versions()),
        ApiKey::SASL_HANDSHAKE => {
            answer::<SaslHandshakeRequest>(frame, |r, _| SaslHandshakeResponse {
                error_code: if r.mechanism == "PLAIN" {
                    ErrorCode::NONE.0
                } else {
                    ErrorCode::UNSUPPORTED_SASL_MECHANISM.0
                },
                mechanisms: vec!["PLAIN".to_owned()],
            })
        }
        ApiKey::SASL_AUTHENTICATE => answer::<SaslAuthenticateRequest>(frame, |r, _| {
            let (user, password) = cluster.sasl.clone().unwrap_or_default();
            let expected = format!("\0{user}\0{password}");
            *authenticated = r.auth_bytes == expected.as_bytes();
            SaslAuthenticateResponse {
                error_code: if *authenticated {
                    ErrorCode::NONE.0
                } else {
                    ErrorCode::SASL_AUTHENTICATION_FAILED.0
                },
                ..Default::default()
            }
        }),
        ApiKey::METADATA => answer::<MetadataRequest>(frame, |r, _| {
            metadata(cluster, r, fault == Some(Fault::StaleMetadata))
        }),
        ApiKey::LIST_OFFSETS => {
            answer::<ListOffsetsRequest>(frame, |r, _| list_offsets(cluster, node, r, fault))
        }
        ApiKey::FIND_COORDINATOR => {
            answer::<FindCoordinatorRequest>(frame, |_, _| find_coordinator(cluster, fault))
        }
        ApiKey::OFFSET_COMMIT => {
            answer::<OffsetCommitRequest>(frame, |r, _| offset_commit(cluster, node, r, fault))
        }
        ApiKey::OFFSET_FETCH => {
            answer::<OffsetFetchRequest>(frame, |r, _| offset_fetch(cluster, node, r, fault))
        }
        ApiKey::FETCH => answer::<FetchRequest>(frame, |r, v| {
            super::fetch::fetch(cluster, node, r, v, fault)
        }),
        other => panic!("the simulated broker got an unexpected request {other:?}"),
    };
    (fault != Some(Fault::CloseAfter)).then_some(answer)
}

/// Decodes the request header and an `R` from `frame`, and encodes `f`'s answer behind the
/// response header of that version.
fn answer<R: Request>(mut frame: Bytes, f: impl FnOnce(R, i16) -> R::Response) -> Bytes {
    let version = i16::from_be_bytes([frame[2], frame[3]]);
    let header = RequestHeader::decode(&mut frame, R::request_header_version(version))
        .expect("a request header");
    let request: R = decode_exact(frame, version).expect("a request body");
    let response = f(request, version);
    let mut out = BytesMut::new();
    out.extend_from_slice(&header.correlation_id.to_be_bytes());
    if R::response_header_version(version) >= 1 {
        out.extend_from_slice(&[0]); // no tagged fields
    }
    response
        .encode(&mut out, version)
        .expect("an encodable answer");
    out.freeze()
}

fn api_versions() -> ApiVersionsResponse {
    let capped = |key: ApiKey, max: i16| match key {
        ApiKey::FIND_COORDINATOR => max.min(3),
        ApiKey::OFFSET_FETCH => max.min(7),
        ApiKey::OFFSET_COMMIT => max.min(8),
        ApiKey::FETCH => max.min(12),
        _ => max,
    };
    ApiVersionsResponse {
        api_keys: SUPPORTED_APIS
            .iter()
            .map(|a| ApiVersion {
                api_key: a.api_key.0,
                min_version: a.versions.min,
                max_version: capped(a.api_key, a.versions.max),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

fn metadata(cluster: &WireCluster, request: MetadataRequest, stale: bool) -> MetadataResponse {
    let wanted = |name: &str| match &request.topics {
        None => true,
        Some(topics) => topics.iter().any(|t| t.name.as_deref() == Some(name)),
    };
    let mut topics = Vec::new();
    if wanted(WIRE_TOPIC) {
        let partitions = cluster
            .partitions
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let (leader_id, leader_epoch) = if stale && p.previous_leader != p.leader {
                    (p.previous_leader, p.leader_epoch - 1)
                } else {
                    (p.leader, p.leader_epoch)
                };
                MetadataResponsePartition {
                    partition_index: i as i32,
                    leader_id,
                    leader_epoch,
                    replica_nodes: cluster.nodes.clone(),
                    isr_nodes: cluster.nodes.clone(),
                    ..Default::default()
                }
            })
            .collect();
        topics.push(MetadataResponseTopic {
            name: Some(WIRE_TOPIC.to_owned()),
            topic_id: crate::sim::TOPIC_ID,
            partitions,
            ..Default::default()
        });
    }
    for t in request.topics.iter().flatten() {
        if t.name.as_deref() != Some(WIRE_TOPIC) {
            topics.push(MetadataResponseTopic {
                error_code: ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.0,
                name: t.name.clone(),
                ..Default::default()
            });
        }
    }
    MetadataResponse {
        brokers: cluster
            .nodes
            .iter()
            .map(|&n| MetadataResponseBroker {
                node_id: n,
                host: format!("sim-{n}"),
                port: n,
                rack: None,
                ..Default::default()
            })
            .collect(),
        cluster_id: Some("wire-sim".to_owned()),
        controller_id: cluster.nodes[0],
        topics,
        ..Default::default()
    }
}

fn list_offsets(
    cluster: &WireCluster,
    node: i32,
    request: ListOffsetsRequest,
    fault: Option<Fault>,
) -> ListOffsetsResponse {
    let topics = request
        .topics
        .into_iter()
        .map(|t| {
            let partitions = t
                .partitions
                .into_iter()
                .map(|rp| {
                    let mut r = ListOffsetsPartitionResponse {
                        partition_index: rp.partition_index,
                        ..Default::default()
                    };
                    let Some(p) = cluster.partition(&t.name, rp.partition_index) else {
                        r.error_code = ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.0;
                        return r;
                    };
                    let code = p.leader_check(node, rp.current_leader_epoch, fault);
                    r.error_code = code.0;
                    if !code.is_ok() {
                        return r;
                    }
                    r.leader_epoch = p.leader_epoch;
                    match rp.timestamp {
                        -1 => r.offset = p.high_watermark(),
                        -2 => r.offset = p.log_start,
                        ts if ts >= 0 => {
                            if let Some((offset, timestamp)) = p.offset_for_time(ts) {
                                r.offset = offset + cluster.skew;
                                r.timestamp = timestamp;
                            }
                        }
                        _ => r.error_code = ErrorCode::UNSUPPORTED_VERSION.0,
                    }
                    r
                })
                .collect();
            ListOffsetsTopicResponse {
                name: t.name,
                partitions,
                ..Default::default()
            }
        })
        .collect();
    ListOffsetsResponse {
        topics,
        ..Default::default()
    }
}

fn find_coordinator(cluster: &WireCluster, fault: Option<Fault>) -> FindCoordinatorResponse {
    if let Some(Fault::Error(code)) = fault {
        return FindCoordinatorResponse {
            error_code: code.0,
            node_id: -1,
            ..Default::default()
        };
    }
    let node = cluster.coordinator;
    FindCoordinatorResponse {
        node_id: node,
        host: format!("sim-{node}"),
        port: node,
        ..Default::default()
    }
}

/// The group-level error of a request to `node` as the coordinator: NOT_COORDINATOR when
/// it isn't one, or the scheduled error.
fn coordinator_error(cluster: &WireCluster, node: i32, fault: Option<Fault>) -> ErrorCode {
    match fault {
        Some(Fault::Error(code)) => code,
        _ if cluster.coordinator != node => ErrorCode::NOT_COORDINATOR,
        _ => ErrorCode::NONE,
    }
}

fn offset_commit(
    cluster: &mut WireCluster,
    node: i32,
    request: OffsetCommitRequest,
    fault: Option<Fault>,
) -> OffsetCommitResponse {
    let code = coordinator_error(cluster, node, fault);
    let mut topics = Vec::new();
    for t in request.topics {
        let mut partitions = Vec::new();
        for p in t.partitions {
            let known =
                t.name == WIRE_TOPIC && (p.partition_index as usize) < cluster.partitions.len();
            let code = if !code.is_ok() {
                code
            } else if !known {
                ErrorCode::UNKNOWN_TOPIC_OR_PARTITION
            } else {
                cluster.committed.insert(
                    (t.name.clone(), p.partition_index),
                    (
                        p.committed_offset,
                        p.committed_leader_epoch,
                        p.committed_metadata,
                    ),
                );
                ErrorCode::NONE
            };
            partitions.push(OffsetCommitResponsePartition {
                partition_index: p.partition_index,
                error_code: code.0,
                ..Default::default()
            });
        }
        topics.push(OffsetCommitResponseTopic {
            name: t.name,
            partitions,
            ..Default::default()
        });
    }
    OffsetCommitResponse {
        topics,
        ..Default::default()
    }
}

fn offset_fetch(
    cluster: &WireCluster,
    node: i32,
    request: OffsetFetchRequest,
    fault: Option<Fault>,
) -> OffsetFetchResponse {
    let code = coordinator_error(cluster, node, fault);
    if !code.is_ok() {
        return OffsetFetchResponse {
            error_code: code.0,
            ..Default::default()
        };
    }
    let topics = request
        .topics
        .unwrap_or_default()
        .into_iter()
        .map(|t| {
            let partitions = t
                .partition_indexes
                .iter()
                .map(|&i| {
                    let (offset, epoch, metadata) = cluster
                        .committed
                        .get(&(t.name.clone(), i))
                        .cloned()
                        .unwrap_or((-1, -1, Some(String::new())));
                    OffsetFetchResponsePartition {
                        partition_index: i,
                        committed_offset: offset,
                        committed_leader_epoch: epoch,
                        metadata,
                        ..Default::default()
                    }
                })
                .collect();
            OffsetFetchResponseTopic {
                name: t.name,
                partitions,
                ..Default::default()
            }
        })
        .collect();
    OffsetFetchResponse {
        topics,
        ..Default::default()
    }
}
