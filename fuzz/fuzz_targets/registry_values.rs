#![no_main]
//! Confluent's wire format and kseek-registry's Avro and Protobuf decoders to JSON: any bytes
//! give a value or an error, never a panic, and never an allocation beyond what the bytes
//! justify (run with `-malloc_limit_mb=64`). The first byte picks one of the schemas: for Avro
//! every type and logical type, a recursive list, arrays and maps of zero-width items; for
//! Protobuf the tests' order.proto (nested messages, maps, oneof, well-known types, an import)
//! and a recursive message, with the message indexes read from the framing; where both
//! Protobuf paths accept a message, the wire walker must print what prost-reflect prints.

use std::sync::OnceLock;

use kseek_registry::avro::AvroSchema;
use kseek_registry::protobuf::ProtoSchema;
use kseek_registry::wire::Framed;
use kseek_registry::{RegisteredSchema, ResolvedSchema};
use libfuzzer_sys::fuzz_target;

const SCHEMAS: &[&str] = &[
    r#"{"type":"record","name":"Event","namespace":"f","fields":[
        {"name":"b","type":"boolean"},{"name":"i","type":"int"},{"name":"l","type":"long"},
        {"name":"f","type":"float"},{"name":"d","type":"double"},{"name":"by","type":"bytes"},
        {"name":"s","type":"string"},
        {"name":"dec","type":{"type":"bytes","logicalType":"decimal","precision":40,"scale":3}},
        {"name":"decf","type":{"type":"fixed","name":"Money","size":20,"logicalType":"decimal","precision":40,"scale":4}},
        {"name":"day","type":{"type":"int","logicalType":"date"}},
        {"name":"tmil","type":{"type":"int","logicalType":"time-millis"}},
        {"name":"tmic","type":{"type":"long","logicalType":"time-micros"}},
        {"name":"tsm","type":{"type":"long","logicalType":"timestamp-millis"}},
        {"name":"tsu","type":{"type":"long","logicalType":"timestamp-micros"}},
        {"name":"tsn","type":{"type":"long","logicalType":"timestamp-nanos"}},
        {"name":"ltsm","type":{"type":"long","logicalType":"local-timestamp-millis"}},
        {"name":"id","type":{"type":"string","logicalType":"uuid"}},
        {"name":"dur","type":{"type":"fixed","name":"D","size":12,"logicalType":"duration"}},
        {"name":"color","type":{"type":"enum","name":"Color","symbols":["RED","GREEN"]}},
        {"name":"nums","type":{"type":"array","items":"int"}},
        {"name":"attrs","type":{"type":"map","values":["null","double","Color"]}}
    ]}"#,
    r#"{"type":"record","name":"L","fields":[{"name":"v","type":"long"},{"name":"next","type":["null","L"]}]}"#,
    r#"{"type":"array","items":{"type":"map","values":"null"}}"#,
    r#"{"type":"array","items":{"type":"record","name":"E","fields":[]}}"#,
];

fn schemas() -> &'static [AvroSchema] {
    static PARSED: OnceLock<Vec<AvroSchema>> = OnceLock::new();
    PARSED.get_or_init(|| {
        SCHEMAS
            .iter()
            .map(|text| {
                let mut schema = RegisteredSchema::avro(text);
                schema.id = Some(1);
                AvroSchema::parse(&ResolvedSchema::new(schema)).expect("a valid schema")
            })
            .collect()
    })
}

const MONEY: &str = include_str!("../../tests/registry/proto/common/money.proto");
const ORDER: &str = include_str!("../../tests/registry/proto/order.proto");
const TREE: &str = "syntax = \"proto3\"; message Tree { repeated Tree children = 1; map<int32, Tree> named = 2; bytes leaf = 3; }";

fn protos() -> &'static [ProtoSchema] {
    static PARSED: OnceLock<Vec<ProtoSchema>> = OnceLock::new();
    PARSED.get_or_init(|| {
        let order = ResolvedSchema::with_dependencies(
            RegisteredSchema::protobuf(ORDER),
            vec![("common/money.proto".to_owned(), RegisteredSchema::protobuf(MONEY))],
        );
        let tree = ResolvedSchema::new(RegisteredSchema::protobuf(TREE));
        [order, tree]
            .iter()
            .map(|s| ProtoSchema::parse(s).expect("a valid schema"))
            .collect()
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, payload)) = data.split_first() else {
        return;
    };
    if pick & 0x80 != 0 {
        // Protobuf: the payload is framed (magic byte, id, message indexes, message).
        let Ok(framed) = Framed::parse(payload) else {
            return;
        };
        let Ok((indexes, message)) = framed.protobuf_indexes() else {
            return;
        };
        let protos = protos();
        let schema = &protos[usize::from(pick) % protos.len()];
        let mut fast = Vec::new();
        let fast_ok = schema.to_json(&indexes, message, &mut fast).is_ok();
        if fast_ok {
            serde_json::from_slice::<serde_json::Value>(&fast).expect("valid JSON");
        }
        // The wire walker prints what prost-reflect's dynamic messages print.
        let mut dynamic = Vec::new();
        if schema.to_json_dynamic(&indexes, message, &mut dynamic).is_ok() && fast_ok {
            assert_eq!(
                String::from_utf8_lossy(&fast),
                String::from_utf8_lossy(&dynamic),
                "the wire walker and prost-reflect disagree"
            );
        }
        return;
    }
    let schemas = schemas();
    let schema = &schemas[usize::from(pick) % schemas.len()];
    let mut out = String::new();
    if schema.to_json(payload, &mut out).is_ok() {
        // What decodes is JSON.
        serde_json::from_str::<serde_json::Value>(&out).expect("valid JSON");
    }
    // A check agrees with a decode.
    assert_eq!(schema.check(payload).is_ok(), schema.to_json(payload, &mut String::new()).is_ok());
});
