// Package arch holds no code: its test is the layering of ARCHITECTURE.md written as rules
// over the module's import graph (go list), and fails naming every import that breaks one.
//
// The rules, by layer:
//
//   - protocol and its sub-packages are the bottom: they import nothing of labmate's but
//     protocol/… and internal/….
//   - The interface packages at the roots of the domains (kernel, perception, llm, memory, lab,
//     optimize, job, knowledge) import protocol and internal/… only; tool adds llm.
//   - A domain's sub-packages stay in their domain: kernel/… imports only kernel/…, protocol and
//     internal/… (lab client code such as the bench's Opentrons API lives with the lab and
//     reaches a kernel as kernel.Options.Library); perception, llm and optimize likewise.
//   - knowledge/… adds llm, tool and memory/statement (what a scientific text's words are:
//     its function words, units, entities), which search shares with memory.
//   - The lab uses kernels, operations and tools but no agent, memory, job, server or eval.
//   - agent and operation use interfaces, never a concrete backend (an interpreter, a model
//     provider, a database, a scheduler).
//   - Harnesses (eval/…) are handed their material: they do not import examples/….
//   - server imports no lab, memory, agent or job implementation (only their interfaces).
//   - Only cmd/labmate (and the test helpers under internal/) imports the concrete backends
//     across domains; nothing imports cmd/….
package arch
