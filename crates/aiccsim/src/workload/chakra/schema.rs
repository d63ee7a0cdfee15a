//! The messages of a Chakra execution trace, as Rust structs that `prost` encodes and decodes:
//! written by hand from `et_def.proto` (beside this file), so that no protobuf compiler is
//! needed to build aiccsim. The tests below hold each struct field to the number the `.proto`
//! gives it, and each enum value to its name there.

/// A named value of a node (or of the trace's metadata).
#[derive(Clone, PartialEq, prost::Message)]
pub struct AttributeProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub doc_string: String,
    #[prost(
        oneof = "Value",
        tags = "3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32"
    )]
    pub value: Option<Value>,
}

/// The value of an attribute: one of these.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Value {
    #[prost(double, tag = "3")]
    DoubleVal(f64),
    #[prost(message, tag = "4")]
    DoubleList(DoubleList),
    #[prost(float, tag = "5")]
    FloatVal(f32),
    #[prost(message, tag = "6")]
    FloatList(FloatList),
    #[prost(int32, tag = "7")]
    Int32Val(i32),
    #[prost(message, tag = "8")]
    Int32List(Int32List),
    #[prost(int64, tag = "9")]
    Int64Val(i64),
    #[prost(message, tag = "10")]
    Int64List(Int64List),
    #[prost(uint32, tag = "11")]
    Uint32Val(u32),
    #[prost(message, tag = "12")]
    Uint32List(Uint32List),
    #[prost(uint64, tag = "13")]
    Uint64Val(u64),
    #[prost(message, tag = "14")]
    Uint64List(Uint64List),
    #[prost(sint32, tag = "15")]
    Sint32Val(i32),
    #[prost(message, tag = "16")]
    Sint32List(Sint32List),
    #[prost(sint64, tag = "17")]
    Sint64Val(i64),
    #[prost(message, tag = "18")]
    Sint64List(Sint64List),
    #[prost(fixed32, tag = "19")]
    Fixed32Val(u32),
    #[prost(message, tag = "20")]
    Fixed32List(Fixed32List),
    #[prost(fixed64, tag = "21")]
    Fixed64Val(u64),
    #[prost(message, tag = "22")]
    Fixed64List(Fixed64List),
    #[prost(sfixed32, tag = "23")]
    Sfixed32Val(i32),
    #[prost(message, tag = "24")]
    Sfixed32List(Sfixed32List),
    #[prost(sfixed64, tag = "25")]
    Sfixed64Val(i64),
    #[prost(message, tag = "26")]
    Sfixed64List(Sfixed64List),
    #[prost(bool, tag = "27")]
    BoolVal(bool),
    #[prost(message, tag = "28")]
    BoolList(BoolList),
    #[prost(string, tag = "29")]
    StringVal(String),
    #[prost(message, tag = "30")]
    StringList(StringList),
    #[prost(bytes = "vec", tag = "31")]
    BytesVal(Vec<u8>),
    #[prost(message, tag = "32")]
    BytesList(BytesList),
}

/// The list messages: a single repeated field `values`, numbered 1.
macro_rules! lists {
    ($($name:ident: $kind:ident => $ty:ty,)+) => {
        $(
            #[derive(Clone, PartialEq, prost::Message)]
            pub struct $name {
                #[prost($kind, repeated, tag = "1")]
                pub values: Vec<$ty>,
            }
        )+
    };
}

lists! {
    DoubleList: double => f64,
    FloatList: float => f32,
    Int32List: int32 => i32,
    Int64List: int64 => i64,
    Uint32List: uint32 => u32,
    Uint64List: uint64 => u64,
    Sint32List: sint32 => i32,
    Sint64List: sint64 => i64,
    Fixed32List: fixed32 => u32,
    Fixed64List: fixed64 => u64,
    Sfixed32List: sfixed32 => i32,
    Sfixed64List: sfixed64 => i64,
    BoolList: bool => bool,
    StringList: string => String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct BytesList {
    #[prost(bytes = "vec", repeated, tag = "1")]
    pub values: Vec<Vec<u8>>,
}

/// The first message of a trace file.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GlobalMetadata {
    #[prost(string, tag = "1")]
    pub version: String,
    #[prost(message, repeated, tag = "2")]
    pub attr: Vec<AttributeProto>,
}

/// What a node does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum NodeType {
    InvalidNode = 0,
    MetadataNode = 1,
    MemLoadNode = 2,
    MemStoreNode = 3,
    CompNode = 4,
    CommSendNode = 5,
    CommRecvNode = 6,
    CommCollNode = 7,
}

impl NodeType {
    /// Its name in the schema.
    pub fn name(self) -> &'static str {
        match self {
            NodeType::InvalidNode => "INVALID_NODE",
            NodeType::MetadataNode => "METADATA_NODE",
            NodeType::MemLoadNode => "MEM_LOAD_NODE",
            NodeType::MemStoreNode => "MEM_STORE_NODE",
            NodeType::CompNode => "COMP_NODE",
            NodeType::CommSendNode => "COMM_SEND_NODE",
            NodeType::CommRecvNode => "COMM_RECV_NODE",
            NodeType::CommCollNode => "COMM_COLL_NODE",
        }
    }

    /// Every type, in the schema's order.
    pub const ALL: [NodeType; 8] = [
        NodeType::InvalidNode,
        NodeType::MetadataNode,
        NodeType::MemLoadNode,
        NodeType::MemStoreNode,
        NodeType::CompNode,
        NodeType::CommSendNode,
        NodeType::CommRecvNode,
        NodeType::CommCollNode,
    ];
}

/// The collective of a COMM_COLL_NODE (its `comm_type` attribute).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum CollectiveCommType {
    AllReduce = 0,
    Reduce = 1,
    AllGather = 2,
    Gather = 3,
    Scatter = 4,
    Broadcast = 5,
    AllToAll = 6,
    ReduceScatter = 7,
    ReduceScatterBlock = 8,
    Barrier = 9,
}

impl CollectiveCommType {
    /// Its name in the schema.
    pub fn name(self) -> &'static str {
        match self {
            CollectiveCommType::AllReduce => "ALL_REDUCE",
            CollectiveCommType::Reduce => "REDUCE",
            CollectiveCommType::AllGather => "ALL_GATHER",
            CollectiveCommType::Gather => "GATHER",
            CollectiveCommType::Scatter => "SCATTER",
            CollectiveCommType::Broadcast => "BROADCAST",
            CollectiveCommType::AllToAll => "ALL_TO_ALL",
            CollectiveCommType::ReduceScatter => "REDUCE_SCATTER",
            CollectiveCommType::ReduceScatterBlock => "REDUCE_SCATTER_BLOCK",
            CollectiveCommType::Barrier => "BARRIER",
        }
    }
}

/// One operation of one rank.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Node {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(enumeration = "NodeType", tag = "3")]
    pub r#type: i32,
    #[prost(uint64, repeated, tag = "4")]
    pub ctrl_deps: Vec<u64>,
    #[prost(uint64, repeated, tag = "5")]
    pub data_deps: Vec<u64>,
    #[prost(uint64, tag = "6")]
    pub start_time_micros: u64,
    #[prost(uint64, tag = "7")]
    pub duration_micros: u64,
    #[prost(message, optional, tag = "8")]
    pub inputs: Option<IoInfo>,
    #[prost(message, optional, tag = "9")]
    pub outputs: Option<IoInfo>,
    #[prost(message, repeated, tag = "10")]
    pub attr: Vec<AttributeProto>,
}

/// A node's inputs or outputs, as text (the schema's `IOInfo`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct IoInfo {
    #[prost(string, tag = "1")]
    pub values: String,
    #[prost(string, tag = "2")]
    pub shapes: String,
    #[prost(string, tag = "3")]
    pub types: String,
}

impl AttributeProto {
    /// An attribute `name` holding `value`.
    pub fn new(name: &str, value: Value) -> AttributeProto {
        AttributeProto { name: name.to_string(), doc_string: String::new(), value: Some(value) }
    }

    /// Its value as an integer, whichever integer type the writer chose (Chakra's converters
    /// write `comm_type` and `comm_size` as int64, ASTRA-sim reads `comm_src` as int32, other
    /// tools write unsigned values); `None` for any other value.
    pub fn integer(&self) -> Option<i128> {
        Some(match self.value.as_ref()? {
            Value::Int32Val(v) | Value::Sint32Val(v) | Value::Sfixed32Val(v) => i128::from(*v),
            Value::Int64Val(v) | Value::Sint64Val(v) | Value::Sfixed64Val(v) => i128::from(*v),
            Value::Uint32Val(v) | Value::Fixed32Val(v) => i128::from(*v),
            Value::Uint64Val(v) | Value::Fixed64Val(v) => i128::from(*v),
            _ => return None,
        })
    }

    /// Its value if it is a string.
    pub fn string(&self) -> Option<&str> {
        match self.value.as_ref()? {
            Value::StringVal(s) => Some(s),
            _ => None,
        }
    }
}

impl Node {
    /// Its attribute `name` (the first, should it be given twice).
    pub fn attribute(&self, name: &str) -> Option<&AttributeProto> {
        self.attr.iter().find(|a| a.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;
    use std::collections::BTreeMap;

    const PROTO: &str = include_str!("et_def.proto");

    /// Every `message` and `enum` of the .proto: its name, and its fields' (or values') names
    /// and numbers.
    fn declared() -> BTreeMap<String, BTreeMap<String, i32>> {
        let mut all = BTreeMap::new();
        let mut current: Option<String> = None;
        for line in PROTO.lines().map(|l| l.split("//").next().unwrap().trim()) {
            for statement in line.split_inclusive(['{', '}', ';']).map(str::trim) {
                let words: Vec<&str> = statement.split_whitespace().collect();
                match words.as_slice() {
                    ["message" | "enum", name, "{"] => {
                        current = Some(name.to_string());
                        all.insert(name.to_string(), BTreeMap::new());
                    }
                    // A oneof's fields belong to the message around it.
                    ["oneof", _, "{"] => {}
                    [.., name, "=", number] if current.is_some() => {
                        let number: i32 = number.trim_end_matches(';').parse().unwrap();
                        all.get_mut(current.as_ref().unwrap()).unwrap().insert(name.to_string(), number);
                    }
                    _ => {}
                }
            }
        }
        all
    }

    /// The field numbers of an encoded message's top-level fields, in order.
    fn tags(mut bytes: &[u8]) -> Vec<i32> {
        let mut out = Vec::new();
        while !bytes.is_empty() {
            let key = prost::encoding::decode_varint(&mut bytes).unwrap();
            out.push((key >> 3) as i32);
            let skip = match key & 7 {
                0 => {
                    prost::encoding::decode_varint(&mut bytes).unwrap();
                    0
                }
                1 => 8,
                2 => prost::encoding::decode_varint(&mut bytes).unwrap() as usize,
                5 => 4,
                w => panic!("wire type {w}"),
            };
            bytes = &bytes[skip..];
        }
        out
    }

    fn attr(v: Value) -> Vec<u8> {
        AttributeProto { value: Some(v), ..Default::default() }.encode_to_vec()
    }

    /// (message, field, the message encoded with that field alone set).
    fn one_field_each() -> Vec<(&'static str, &'static str, Vec<u8>)> {
        let io = || Some(IoInfo { values: "v".into(), ..Default::default() });
        let mut v = vec![
            ("AttributeProto", "name", AttributeProto { name: "n".into(), ..Default::default() }.encode_to_vec()),
            ("AttributeProto", "doc_string", AttributeProto { doc_string: "d".into(), ..Default::default() }.encode_to_vec()),
            ("AttributeProto", "double_val", attr(Value::DoubleVal(1.5))),
            ("AttributeProto", "double_list", attr(Value::DoubleList(DoubleList { values: vec![1.0] }))),
            ("AttributeProto", "float_val", attr(Value::FloatVal(1.5))),
            ("AttributeProto", "float_list", attr(Value::FloatList(FloatList { values: vec![1.0] }))),
            ("AttributeProto", "int32_val", attr(Value::Int32Val(-3))),
            ("AttributeProto", "int32_list", attr(Value::Int32List(Int32List { values: vec![1] }))),
            ("AttributeProto", "int64_val", attr(Value::Int64Val(-3))),
            ("AttributeProto", "int64_list", attr(Value::Int64List(Int64List { values: vec![1] }))),
            ("AttributeProto", "uint32_val", attr(Value::Uint32Val(3))),
            ("AttributeProto", "uint32_list", attr(Value::Uint32List(Uint32List { values: vec![1] }))),
            ("AttributeProto", "uint64_val", attr(Value::Uint64Val(3))),
            ("AttributeProto", "uint64_list", attr(Value::Uint64List(Uint64List { values: vec![1] }))),
            ("AttributeProto", "sint32_val", attr(Value::Sint32Val(-3))),
            ("AttributeProto", "sint32_list", attr(Value::Sint32List(Sint32List { values: vec![1] }))),
            ("AttributeProto", "sint64_val", attr(Value::Sint64Val(-3))),
            ("AttributeProto", "sint64_list", attr(Value::Sint64List(Sint64List { values: vec![1] }))),
            ("AttributeProto", "fixed32_val", attr(Value::Fixed32Val(3))),
            ("AttributeProto", "fixed32_list", attr(Value::Fixed32List(Fixed32List { values: vec![1] }))),
            ("AttributeProto", "fixed64_val", attr(Value::Fixed64Val(3))),
            ("AttributeProto", "fixed64_list", attr(Value::Fixed64List(Fixed64List { values: vec![1] }))),
            ("AttributeProto", "sfixed32_val", attr(Value::Sfixed32Val(-3))),
            ("AttributeProto", "sfixed32_list", attr(Value::Sfixed32List(Sfixed32List { values: vec![1] }))),
            ("AttributeProto", "sfixed64_val", attr(Value::Sfixed64Val(-3))),
            ("AttributeProto", "sfixed64_list", attr(Value::Sfixed64List(Sfixed64List { values: vec![1] }))),
            ("AttributeProto", "bool_val", attr(Value::BoolVal(true))),
            ("AttributeProto", "bool_list", attr(Value::BoolList(BoolList { values: vec![true] }))),
            ("AttributeProto", "string_val", attr(Value::StringVal("s".into()))),
            ("AttributeProto", "string_list", attr(Value::StringList(StringList { values: vec!["s".into()] }))),
            ("AttributeProto", "bytes_val", attr(Value::BytesVal(vec![7]))),
            ("AttributeProto", "bytes_list", attr(Value::BytesList(BytesList { values: vec![vec![7]] }))),
            ("GlobalMetadata", "version", GlobalMetadata { version: "1".into(), attr: vec![] }.encode_to_vec()),
            ("GlobalMetadata", "attr", GlobalMetadata { version: String::new(), attr: vec![Default::default()] }.encode_to_vec()),
            ("Node", "id", Node { id: 9, ..Default::default() }.encode_to_vec()),
            ("Node", "name", Node { name: "n".into(), ..Default::default() }.encode_to_vec()),
            ("Node", "type", Node { r#type: NodeType::CommCollNode as i32, ..Default::default() }.encode_to_vec()),
            ("Node", "ctrl_deps", Node { ctrl_deps: vec![1], ..Default::default() }.encode_to_vec()),
            ("Node", "data_deps", Node { data_deps: vec![1], ..Default::default() }.encode_to_vec()),
            ("Node", "start_time_micros", Node { start_time_micros: 1, ..Default::default() }.encode_to_vec()),
            ("Node", "duration_micros", Node { duration_micros: 1, ..Default::default() }.encode_to_vec()),
            ("Node", "inputs", Node { inputs: io(), ..Default::default() }.encode_to_vec()),
            ("Node", "outputs", Node { outputs: io(), ..Default::default() }.encode_to_vec()),
            ("Node", "attr", Node { attr: vec![Default::default()], ..Default::default() }.encode_to_vec()),
            ("IOInfo", "values", IoInfo { values: "v".into(), ..Default::default() }.encode_to_vec()),
            ("IOInfo", "shapes", IoInfo { shapes: "s".into(), ..Default::default() }.encode_to_vec()),
            ("IOInfo", "types", IoInfo { types: "t".into(), ..Default::default() }.encode_to_vec()),
        ];
        let list = |name: &'static str, bytes: Vec<u8>| (name, "values", bytes);
        v.extend([
            list("DoubleList", DoubleList { values: vec![1.0] }.encode_to_vec()),
            list("FloatList", FloatList { values: vec![1.0] }.encode_to_vec()),
            list("Int32List", Int32List { values: vec![1] }.encode_to_vec()),
            list("Int64List", Int64List { values: vec![1] }.encode_to_vec()),
            list("Uint32List", Uint32List { values: vec![1] }.encode_to_vec()),
            list("Uint64List", Uint64List { values: vec![1] }.encode_to_vec()),
            list("Sint32List", Sint32List { values: vec![1] }.encode_to_vec()),
            list("Sint64List", Sint64List { values: vec![1] }.encode_to_vec()),
            list("Fixed32List", Fixed32List { values: vec![1] }.encode_to_vec()),
            list("Fixed64List", Fixed64List { values: vec![1] }.encode_to_vec()),
            list("Sfixed32List", Sfixed32List { values: vec![1] }.encode_to_vec()),
            list("Sfixed64List", Sfixed64List { values: vec![1] }.encode_to_vec()),
            list("BoolList", BoolList { values: vec![true] }.encode_to_vec()),
            list("StringList", StringList { values: vec!["s".into()] }.encode_to_vec()),
            list("BytesList", BytesList { values: vec![vec![1]] }.encode_to_vec()),
        ]);
        v
    }

    #[test]
    fn every_field_of_the_proto_has_its_number_in_the_structs() {
        let declared = declared();
        let set = one_field_each();
        for (message, field, bytes) in &set {
            let number = declared.get(*message).and_then(|m| m.get(*field));
            let number = number.unwrap_or_else(|| panic!("et_def.proto has no {message}.{field}"));
            assert_eq!(tags(bytes), vec![*number], "{message}.{field}");
        }
        // And no field of the .proto is left without a struct field.
        for (message, fields) in declared.iter().filter(|(m, _)| !["NodeType", "CollectiveCommType"].contains(&m.as_str())) {
            for field in fields.keys() {
                assert!(
                    set.iter().any(|(m, f, _)| m == message && f == field),
                    "et_def.proto's {message}.{field} has no struct field"
                );
            }
        }
        assert_eq!(declared.len(), 21, "messages and enums of et_def.proto: {:?}", declared.keys());
    }

    #[test]
    fn enum_values_have_the_proto_names() {
        let declared = declared();
        let nodes = &declared["NodeType"];
        assert_eq!(nodes.len(), NodeType::ALL.len());
        for (name, &n) in nodes {
            assert_eq!(NodeType::try_from(n).unwrap().name(), name);
        }
        let colls = &declared["CollectiveCommType"];
        for (name, &n) in colls {
            assert_eq!(CollectiveCommType::try_from(n).unwrap().name(), name);
        }
        assert!(CollectiveCommType::try_from(colls.len() as i32).is_err());
    }

    #[test]
    fn a_node_with_every_field_set_round_trips() {
        let node = Node {
            id: 41,
            name: "allreduce".into(),
            r#type: NodeType::CommCollNode as i32,
            ctrl_deps: vec![1, 2],
            data_deps: vec![3],
            start_time_micros: 10,
            duration_micros: 20,
            inputs: Some(IoInfo { values: "a".into(), shapes: "[[4]]".into(), types: "Tensor(float)".into() }),
            outputs: Some(IoInfo { values: "b".into(), shapes: "[[4]]".into(), types: "Tensor(float)".into() }),
            attr: vec![
                AttributeProto::new("comm_type", Value::Int64Val(CollectiveCommType::AllGather as i64)),
                AttributeProto::new("comm_size", Value::Uint64Val(1 << 40)),
                AttributeProto::new("pg_name", Value::StringVal("3".into())),
            ],
        };
        let back = Node::decode(node.encode_to_vec().as_slice()).unwrap();
        assert_eq!(back, node);
        assert_eq!(back.attribute("comm_size").and_then(AttributeProto::integer), Some(1 << 40));
        assert_eq!(back.attribute("pg_name").and_then(AttributeProto::string), Some("3"));
        assert_eq!(back.attribute("comm_type").and_then(AttributeProto::integer), Some(2));
    }
}
