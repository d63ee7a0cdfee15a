use aiccsim::Scenario;

#[test]
fn smoke() {
    let s = Scenario::from_toml(r#"
[topology]
kind = "star"
hosts = 17
link = { bandwidth = "100Gbps", delay = "1us" }
[cc]
algorithm = "dcqcn"
[workload]
kind = "incast"
senders = "1..=16"
receiver = 0
size = "10MB"
"#, "t").unwrap();
    let r = aiccsim::run(&s).unwrap();
    println!("{}", serde_json::to_string_pretty(&r.summary).unwrap());
    for f in &r.flows { println!("{:?} {:?}", f.fct(), f.slowdown()); }
}
