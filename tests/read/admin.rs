//! Admin requests the Java tool doesn't offer (DeleteRecords, CreatePartitions), sent on a
//! kseek connection.

use std::time::{Duration, Instant};

use bytes::{BufMut, Bytes, BytesMut};
use kseek_protocol::primitives::{
    get_array, get_i16, get_i32, get_i64, get_nullable_string, get_string,
};
use kseek_protocol::{ApiKey, Message, Request, VersionRange};

use crate::support::{Broker, Isolation, OffsetQuery};

/// Deletes records of `topic`/`partition` below `offset` (DeleteRecords v1); returns the new
/// log start offset.
pub(crate) async fn delete_records(
    broker: &Broker,
    topic: &str,
    partition: i32,
    offset: i64,
) -> i64 {
    let conn = kseek::Connection::connect(
        broker.bootstrap().split(',').next().unwrap(),
        kseek::ConnectionConfig::default(),
    )
    .await
    .unwrap();
    let response = conn
        .send_version(
            &DeleteRecordsRequest {
                topic: topic.to_owned(),
                partition,
                offset,
            },
            1,
        )
        .await
        .unwrap();
    assert_eq!(response.error_code, 0, "DeleteRecords failed");
    response.low_watermark
}

/// Grows `topic` to `count` partitions (CreatePartitions v1) and waits until the Java tool
/// sees them.
pub(crate) async fn create_partitions(broker: &Broker, topic: &str, count: i32) {
    let conn = kseek::Connection::connect(
        broker.bootstrap().split(',').next().unwrap(),
        kseek::ConnectionConfig::default(),
    )
    .await
    .unwrap();
    let response = conn
        .send_version(
            &CreatePartitionsRequest {
                topic: topic.to_owned(),
                count,
            },
            1,
        )
        .await
        .unwrap();
    assert_eq!(response.error_code, 0, "CreatePartitions failed");
    let deadline = Instant::now() + Duration::from_secs(30);
    while broker
        .list_offsets(topic, OffsetQuery::Latest, Isolation::ReadUncommitted)
        .len()
        < count as usize
    {
        assert!(Instant::now() < deadline, "partitions never appeared");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn put_str(buf: &mut BytesMut, s: &str) {
    buf.put_i16(s.len() as i16);
    buf.put_slice(s.as_bytes());
}

fn not_decoded(what: &'static str) -> kseek_protocol::Error {
    kseek_protocol::Error::InvalidValue { what, value: 0 }
}

/// DeleteRecords v0–1 for one partition (non-flexible).
struct DeleteRecordsRequest {
    topic: String,
    partition: i32,
    offset: i64,
}

struct DeleteRecordsResponse {
    low_watermark: i64,
    error_code: i16,
}

impl Message for DeleteRecordsRequest {
    const API_KEY: ApiKey = ApiKey(21);
    const VERSIONS: VersionRange = VersionRange { min: 0, max: 1 };
    const FIRST_FLEXIBLE_VERSION: i16 = 2;
    const NAME: &'static str = "DeleteRecordsRequest";

    fn encode(&self, buf: &mut BytesMut, _version: i16) -> kseek_protocol::Result<()> {
        buf.put_i32(1);
        put_str(buf, &self.topic);
        buf.put_i32(1);
        buf.put_i32(self.partition);
        buf.put_i64(self.offset);
        buf.put_i32(30_000);
        Ok(())
    }

    fn decode(_buf: &mut Bytes, _version: i16) -> kseek_protocol::Result<Self> {
        Err(not_decoded("DeleteRecordsRequest"))
    }
}

impl Request for DeleteRecordsRequest {
    type Response = DeleteRecordsResponse;
}

impl Message for DeleteRecordsResponse {
    const API_KEY: ApiKey = ApiKey(21);
    const VERSIONS: VersionRange = VersionRange { min: 0, max: 1 };
    const FIRST_FLEXIBLE_VERSION: i16 = 2;
    const NAME: &'static str = "DeleteRecordsResponse";

    fn encode(&self, _buf: &mut BytesMut, _version: i16) -> kseek_protocol::Result<()> {
        Err(not_decoded("DeleteRecordsResponse"))
    }

    fn decode(buf: &mut Bytes, _version: i16) -> kseek_protocol::Result<Self> {
        get_i32(buf, "throttle")?;
        let topics = get_array(buf, false, 6, "topics", |b| {
            get_string(b, false, "name")?;
            get_array(b, false, 14, "partitions", |b| {
                get_i32(b, "partition")?;
                Ok((get_i64(b, "low_watermark")?, get_i16(b, "error_code")?))
            })
        })?;
        let (low_watermark, error_code) = topics
            .first()
            .and_then(|t| t.first())
            .copied()
            .ok_or(not_decoded("DeleteRecordsResponse.topics"))?;
        Ok(DeleteRecordsResponse {
            low_watermark,
            error_code,
        })
    }
}

/// CreatePartitions v0–1 for one topic (non-flexible).
struct CreatePartitionsRequest {
    topic: String,
    count: i32,
}

struct CreatePartitionsResponse {
    error_code: i16,
}

impl Message for CreatePartitionsRequest {
    const API_KEY: ApiKey = ApiKey(37);
    const VERSIONS: VersionRange = VersionRange { min: 0, max: 1 };
    const FIRST_FLEXIBLE_VERSION: i16 = 2;
    const NAME: &'static str = "CreatePartitionsRequest";

    fn encode(&self, buf: &mut BytesMut, _version: i16) -> kseek_protocol::Result<()> {
        buf.put_i32(1);
        put_str(buf, &self.topic);
        buf.put_i32(self.count);
        buf.put_i32(-1); // assignments: null
        buf.put_i32(30_000);
        buf.put_u8(0); // validate_only
        Ok(())
    }

    fn decode(_buf: &mut Bytes, _version: i16) -> kseek_protocol::Result<Self> {
        Err(not_decoded("CreatePartitionsRequest"))
    }
}

impl Request for CreatePartitionsRequest {
    type Response = CreatePartitionsResponse;
}

impl Message for CreatePartitionsResponse {
    const API_KEY: ApiKey = ApiKey(37);
    const VERSIONS: VersionRange = VersionRange { min: 0, max: 1 };
    const FIRST_FLEXIBLE_VERSION: i16 = 2;
    const NAME: &'static str = "CreatePartitionsResponse";

    fn encode(&self, _buf: &mut BytesMut, _version: i16) -> kseek_protocol::Result<()> {
        Err(not_decoded("CreatePartitionsResponse"))
    }

    fn decode(buf: &mut Bytes, _version: i16) -> kseek_protocol::Result<Self> {
        get_i32(buf, "throttle")?;
        let results = get_array(buf, false, 6, "results", |b| {
            get_string(b, false, "name")?;
            let code = get_i16(b, "error_code")?;
            get_nullable_string(b, false, "error_message")?;
            Ok(code)
        })?;
        Ok(CreatePartitionsResponse {
            error_code: results
                .first()
                .copied()
                .ok_or(not_decoded("CreatePartitionsResponse.results"))?,
        })
    }
}
