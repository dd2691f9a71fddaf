//! Scenario tests of the XML-family dialects, each checked whole and at
//! several chunk sizes (1, 2, 3, 7 and 64 bytes) against every contract
//! ([`common::check_all`]), plus a split-point property test over the
//! catalogue examples and a run over the public corpus.

#[path = "../common/mod.rs"]
mod common;

mod corpus;
mod dsml;
mod glm;
mod hermes_shared;
mod minimax;
mod morph_xml;
mod qwen3_coder;
mod seed_oss;
mod split_props;
mod step3;
mod util;
mod xml_emulation;
