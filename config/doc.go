// Package config loads, validates and watches the gateway's configuration.
//
// Values come in layers, each over the one before: the documented defaults
// (Default), a YAML file (gateway.yaml in the working directory unless a
// path is given), GATEWAY_-prefixed environment variables with "__" for
// nesting (GATEWAY_ACP__STREAM__METAMODE=verbose sets acp.stream.metaMode),
// and --set key=value flags. Any string value may refer to the environment
// as ${VAR}, which is how secrets such as tokens are normally given; "$${"
// is a literal "${".
//
// Validation reports every problem at once, each naming its YAML key and
// the allowed values (`acp.stream.metaMode: must be one of off minimal
// verbose, got "quiet"`); unknown keys are rejected with a did-you-mean
// suggestion. Parsing has no side effects.
//
// The acp.stream, typing, busy and permissions sections can be overridden
// per platform, per space of the platform (a server, under the platform's
// own word for it) and per channel; the most specific override wins
// (Config.Policy, Explain). Watch reloads the file when it changes. Redacted prints the effective configuration with
// secrets masked.
//
// Each package owns its section's type (projector.Settings for acp.stream,
// typing.Config for typing, and so on); this package only composes them.
// The chat platforms' sections (channels.NAME) belong to their adapter
// packages, which also say what their spaces and groups are called
// (Section, channels.SectionInfo); the caller names the platforms
// (LoadOptions.Platforms), and this package names none.
package config
