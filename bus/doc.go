// Package bus is perflab's message-bus layer: a small transport interface
// (Conn, Subscription) with drivers for Apache Kafka (package bus/kafka),
// NATS (bus/nats) and an in-process bus (bus/mem), and an Awaiter that
// matches replies to the virtual users waiting for them.
//
// # Transports
//
// Dial opens a Conn from a URL whose scheme names a driver; a driver
// registers itself when its package is imported, so a program that dials
// Kafka imports it for effect:
//
//	import _ "github.com/perflab/perflab/bus/kafka"
//
//	conn, err := bus.Dial(ctx, "kafka://127.0.0.1:9092")
//
// A Subscription is live when Subscribe returns: it receives every message
// published to its topics after that, and none published before (a Kafka
// consumer group goes by record timestamps here; see bus/kafka). Each
// subscription with an empty group receives every message; subscriptions
// sharing a group split the messages between them. See each driver's
// documentation for how topics, keys, headers and groups map onto its broker.
//
// # Awaiting replies
//
// A load step that publishes a request and waits for its reply uses one
// Subscription per scenario and an Awaiter on it, not one subscription per
// virtual user. Each virtual user registers the correlation key of the reply
// it expects before it publishes, then waits:
//
//	sub, _ := conn.Subscribe(ctx, []string{"replies"}, "")
//	id, _ := bus.ParseField("json.requestId")
//	aw := bus.NewAwaiter(sub, bus.AwaiterConfig{Key: id.Get})
//	defer aw.Close()
//
//	// in each virtual user:
//	w, err := aw.Register(requestID)
//	err = conn.Publish(ctx, request)
//	reply, err := w.Wait(ctx, 5*time.Second) // errors.Is(err, bus.ErrTimeout) on time-out
//
// A reply that arrives before its key is registered is held for
// AwaiterConfig.Hold, so a fast responder does not race the registration;
// held messages that nobody claims in time are counted (AwaiterStats.Expired).
//
// # Fields
//
// A Field names a part of a message, in the same syntax wherever perflab reads
// one (correlation keys, the responder's conditions and reply templates):
//
//	key          the message key
//	topic        the topic (Kafka) or subject (NATS)
//	header.NAME  the value of header NAME; names are case-sensitive
//	json.PATH    the value at the gjson PATH of the JSON value: a string
//	             without its quotes, other values as their JSON text
package bus
