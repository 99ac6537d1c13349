//! The wire formats the gateway's callers speak, and the translations
//! between them and the internal chat request (docs/architecture.md,
//! "Layers"). Pure data in, data out: nothing here calls an upstream, reads
//! the store or knows the gateway's stages; the gateway's adapters
//! (`gateway::messages`, `gateway::responses`, `gateway::native`) take the
//! translated request through the stages and translate the outcome back
//! with these functions.
//!
//! - [`chat`]: the OpenAI chat completion request, parsed and validated
//!   once ([`chat::ChatRequest`], the service fields taken out).
//! - [`messages`], [`messages_answer`], [`messages_stream`]: Anthropic's
//!   Messages API to the chat request, and the completion or the chat
//!   stream back.
//! - [`responses_input`], [`responses_items`], [`responses_output`]:
//!   OpenAI's Responses API to the chat request (its `input` items in
//!   `responses_items`), and the completion or the chat stream back.
//! - [`native`]: what is read in a forwarded wire format without changing
//!   it (the messages as text for the classifier, the token counts).

pub mod chat;
pub mod messages;
pub mod messages_answer;
pub mod messages_stream;
pub mod native;
pub mod responses_input;
pub mod responses_items;
pub mod responses_output;
