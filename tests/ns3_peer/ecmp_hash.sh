#!/usr/bin/env bash
# Print ns-3's ECMP hash of a few keys, computed by the peer's own function: SwitchNode::EcmpHash,
# cut out of the peer's switch-node.cc and compiled on its own, over the key GetOutDev builds
# (source and destination address, sport | dport << 16). These are the values
# `topology::ecmp_ns3::tests::the_hash_is_ns3s` pins.
#
#   tests/ns3_peer/ecmp_hash.sh CLONE_DIR        (a clone of the peer, as rerun_peer.sh makes)
set -euo pipefail

src="$1/simulation/src/point-to-point/model/switch-node.cc"
work="$(mktemp -d)"
# From its signature to the closing brace of the function.
sed -n '/^uint32_t SwitchNode::EcmpHash/,/^}/p' "$src" > "$work/ecmp_hash.inc"
cat > "$work/main.cc" <<'CC'
#include <cstddef>
#include <cstdint>
#include <cstdio>
struct SwitchNode { static uint32_t EcmpHash(const uint8_t* key, size_t len, uint32_t seed); };
#include "ecmp_hash.inc"
static uint32_t ip(uint32_t id){ return 0x0b000001 + ((id / 256) * 0x00010000) + ((id % 256) * 0x00000100); }
int main(){
	uint32_t cases[][5] = {{0, 0, 0, 0, 0}, {0, 2, 10000, 100, 16}, {0, 2, 10000, 100, 24},
		{2, 0, 100, 10000, 17}, {7, 300, 10003, 100, 1035}, {15, 5, 10001, 100, 2035}};
	for (auto &c : cases){
		union { uint8_t u8[12]; uint32_t u32[3]; } buf;
		buf.u32[0] = ip(c[0]); buf.u32[1] = ip(c[1]); buf.u32[2] = c[2] | (c[3] << 16);
		printf("nodes %u -> %u, ports %u -> %u, seed %u: %u\n", c[0], c[1], c[2], c[3], c[4], SwitchNode::EcmpHash(buf.u8, 12, c[4]));
	}
	union { uint8_t u8[12]; uint32_t u32[3]; } zero = {{0}};
	printf("12 zero bytes, seed 0: %u\n", SwitchNode::EcmpHash(zero.u8, 12, 0));
}
CC
g++ -std=c++11 -o "$work/ecmp_hash" "$work/main.cc"
"$work/ecmp_hash"
rm -rf "$work"
