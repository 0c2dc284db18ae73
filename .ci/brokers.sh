#!/usr/bin/env bash
# Installs and starts, on 127.0.0.1, the message brokers that the bus
# packages' tests use, and exports the variables those tests read:
#
#   PERFLAB_TEST_KAFKA=127.0.0.1:9092        Apache Kafka, single node, KRaft
#                                            (broker and controller, 9093)
#   PERFLAB_TEST_NATS=nats://127.0.0.1:4222  nats-server
#
# Use it from .ci/run (or an interactive shell) as
#
#   source .ci/brokers.sh
#
# which fails the caller when a broker cannot be started. Run as a program
# (bash .ci/brokers.sh) it prints the export lines instead, and
# `bash .ci/brokers.sh stop` stops the brokers it started.
#
# It is idempotent: a broker whose port already accepts connections is left
# alone. Kafka's jars come from Maven Central through Maven (a generated pom
# and dependency:copy-dependencies) and run on the machine's JDK; nats-server
# is Debian's package. Downloads are cached under ~/.cache/perflab-brokers
# (PERFLAB_BROKERS_CACHE), so a second run on the same machine takes seconds.
# The brokers run in the background, detached from this shell (setsid), with
# their data, logs (kafka.log, nats.log) and pid files under
# /tmp/perflab-brokers (PERFLAB_BROKERS_RUN).

perflab_brokers() (
  set -euo pipefail
  local kafka_version=4.3.1 log4j_version=2.25.4
  local cache=${PERFLAB_BROKERS_CACHE:-${HOME:-/root}/.cache/perflab-brokers}
  local run=${PERFLAB_BROKERS_RUN:-/tmp/perflab-brokers}
  local libs=$cache/kafka-$kafka_version/libs

  say() { echo "brokers: $*" >&2; }

  # listening HOST PORT: whether something accepts connections there.
  listening() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

  stop() {
    local name pid
    for name in kafka nats; do
      [ -f "$run/$name.pid" ] || continue
      pid=$(cat "$run/$name.pid")
      if kill "$pid" 2>/dev/null; then
        say "stopping $name (pid $pid)"
        for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
      fi
      rm -f "$run/$name.pid"
    done
  }

  # detach NAME COMMAND...: runs COMMAND in a new session, immune to the end
  # of this shell, logging to $run/NAME.log and writing its pid (which the
  # command keeps, by exec) to $run/NAME.pid.
  detach() {
    local name=$1
    shift
    rm -f "$run/$name.pid"
    : >"$run/$name.log"
    setsid nohup bash -c 'echo $$ >"$0"; exec "$@"' "$run/$name.pid" "$@" \
      >>"$run/$name.log" 2>&1 </dev/null &
  }

  # quietly LOG COMMAND...: runs COMMAND with its output in $run/LOG,
  # shown only if it fails.
  quietly() {
    local log=$run/$1
    shift
    "$@" >"$log" 2>&1 || { tail -40 "$log" >&2; say "failed: $*; log $log"; return 1; }
  }

  apt_install() {
    say "installing $* from Debian"
    export DEBIAN_FRONTEND=noninteractive
    quietly apt.log apt-get update -qq
    quietly apt.log apt-get install -y -qq "$@"
  }

  # fetch_kafka copies the Kafka server's runtime jars, plus a log4j binding
  # for its slf4j logging, into $libs.
  fetch_kafka() {
    [ -f "$libs/.complete" ] && return
    say "fetching Kafka $kafka_version jars from Maven Central"
    local pom=$cache/pom.xml
    cat >"$pom" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>perflab</groupId>
  <artifactId>perflab-kafka-broker</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka_2.13</artifactId>
      <version>$kafka_version</version>
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-slf4j-impl</artifactId>
      <version>$log4j_version</version>
    </dependency>
  </dependencies>
</project>
EOF
    rm -rf "$libs"
    mkdir -p "$libs"
    quietly maven.log mvn -B -f "$pom" -Dmaven.repo.local="$cache/m2" \
      dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$libs"
    touch "$libs/.complete"
  }

  start_kafka() {
    if listening 127.0.0.1 9092; then
      say "kafka: 127.0.0.1:9092 already accepts connections"
      return
    fi
    command -v java >/dev/null || apt_install openjdk-17-jre-headless
    command -v mvn >/dev/null || apt_install maven
    fetch_kafka
    local dir=$run/kafka
    mkdir -p "$dir"
    cat >"$dir/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=127.0.0.1:9093
listeners=PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093
advertised.listeners=PLAINTEXT://127.0.0.1:9092
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
log.dirs=$dir/data
num.partitions=1
auto.create.topics.enable=false
delete.topic.enable=true
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
EOF
    cat >"$dir/log4j2.properties" <<'EOF'
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = out
appender.out.type = Console
appender.out.name = out
appender.out.target = SYSTEM_ERR
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
logger.kafka.name = kafka
logger.kafka.level = WARN
logger.apache.name = org.apache.kafka
logger.apache.level = WARN
logger.server.name = kafka.server.KafkaRaftServer
logger.server.level = INFO
EOF
    local java=(java -Xms256m -Xmx1g -XX:+UseG1GC
      -Dlog4j2.configurationFile="$dir/log4j2.properties" -cp "$libs/*")
    if [ ! -f "$dir/data/meta.properties" ]; then
      local id
      id=$("${java[@]}" kafka.tools.StorageTool random-uuid)
      quietly kafka-format.log "${java[@]}" kafka.tools.StorageTool format --standalone \
        -t "$id" -c "$dir/server.properties"
    fi
    say "starting kafka, log $run/kafka.log"
    detach kafka "${java[@]}" kafka.Kafka "$dir/server.properties"
  }

  start_nats() {
    if listening 127.0.0.1 4222; then
      say "nats: 127.0.0.1:4222 already accepts connections"
      return
    fi
    command -v nats-server >/dev/null || apt_install nats-server
    say "starting nats-server, log $run/nats.log"
    detach nats nats-server -a 127.0.0.1 -p 4222
  }

  # wait_for NAME PORT: until the broker accepts connections (and, for
  # Kafka, has logged that it serves requests), or fail after 90 s.
  wait_for() {
    local name=$1 port=$2 pid
    for _ in $(seq 180); do
      if listening 127.0.0.1 "$port" &&
        { [ "$name" != kafka ] || [ ! -f "$run/kafka.pid" ] ||
          grep -q "Kafka Server started" "$run/kafka.log"; }; then
        return
      fi
      if [ -f "$run/$name.pid" ] && pid=$(cat "$run/$name.pid") && ! kill -0 "$pid" 2>/dev/null; then
        say "$name exited; the end of $run/$name.log:"
        tail -20 "$run/$name.log" >&2
        return 1
      fi
      sleep 0.5
    done
    say "$name is not up on 127.0.0.1:$port after 90 s; see $run/$name.log"
    return 1
  }

  mkdir -p "$cache" "$run"
  if [ "${1:-}" = stop ]; then
    stop
    return
  fi
  local t0=$SECONDS
  start_kafka
  start_nats
  wait_for kafka 9092
  wait_for nats 4222
  say "kafka and nats are up ($((SECONDS - t0)) s)"
)

# perflab_brokers runs as a command of its own, never in an if, && or ||,
# where bash would ignore its set -e.
if [ "${BASH_SOURCE[0]}" != "$0" ]; then
  perflab_brokers # sourced: under the caller's set -e, a failure ends the caller here
  [ $? -eq 0 ] || return 1
  export PERFLAB_TEST_KAFKA=127.0.0.1:9092 PERFLAB_TEST_NATS=nats://127.0.0.1:4222
else
  perflab_brokers "$@"
  [ $? -eq 0 ] || exit 1
  [ "${1:-}" = stop ] || printf 'export %s\n' PERFLAB_TEST_KAFKA=127.0.0.1:9092 PERFLAB_TEST_NATS=nats://127.0.0.1:4222
fi
