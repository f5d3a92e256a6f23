#!/usr/bin/env bash
# The real control plane on loopback: etcd and kube-apiserver built from their pinned Go modules
# (tests/kube/controlplane/go.mod, once, into the cache folder tests/kube/build.sh keeps).
#
#   tests/kube/controlplane.sh start DIR      certificates, tokens and keys into DIR (kept when
#                                             there), both servers started, ready in seconds
#   tests/kube/controlplane.sh stop DIR       both stopped (SIGTERM, then SIGKILL after 10 s)
#   tests/kube/controlplane.sh kill-apiserver DIR    kill -9, as a crashed server
#   tests/kube/controlplane.sh start-apiserver DIR   started again after a kill
#   tests/kube/controlplane.sh compact DIR    etcd compacted to its current revision: older
#                                             resourceVersions and continue tokens get 410
#
# DIR then holds admin.kubeconfig (the admin client certificate, system:masters), token.kubeconfig
# (a static token, system:masters), reader.kubeconfig (a token with no RBAC binding), ca.crt and
# the servers' logs. TLS, RBAC, a service-account issuer and key, API Priority and Fairness and
# the watch cache are on, as in a cluster; etcd sends watch progress notifications.
#
#   KUBE_ETCD_PORT (23790), KUBE_APISERVER_PORT (26443): the loopback ports.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
verb=${1:?usage: controlplane.sh start|stop|kill-apiserver|start-apiserver|compact DIR}
dir=${2:?usage: controlplane.sh $verb DIR}
etcd_port=${KUBE_ETCD_PORT:-23790}
api_port=${KUBE_APISERVER_PORT:-26443}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

say() { echo "controlplane.sh: $*" >&2; }

# A CA, the API server's serving certificate, the admin's client certificate, the service-account
# signing key and the static tokens; made once per DIR.
make_credentials() {
  [ -f "$dir/tokens.csv" ] && return
  command -v openssl >/dev/null || { say "openssl is missing (deploy/install-deps.sh installs it)"; exit 1; }
  (
    cd "$dir"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 30 \
      -subj "/CN=kinformer-test-ca" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr \
      -subj "/CN=kube-apiserver" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:10.0.0.1\n' >san.ext
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out apiserver.crt \
      -days 30 -extfile san.ext 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout admin.key -out admin.csr \
      -subj "/O=system:masters/CN=admin" 2>/dev/null
    openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out admin.crt \
      -days 30 2>/dev/null
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    admin_token=$(openssl rand -hex 16)
    reader_token=$(openssl rand -hex 16)
    printf '%s,admin-token,admin-token-uid,system:masters\n%s,reader,reader-uid\n' \
      "$admin_token" "$reader_token" >tokens.csv
    write_kubeconfig admin.kubeconfig "client-certificate: $dir/admin.crt
    client-key: $dir/admin.key"
    write_kubeconfig token.kubeconfig "token: $admin_token"
    write_kubeconfig reader.kubeconfig "token: $reader_token"
  )
}

write_kubeconfig() {
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: real
  cluster:
    server: https://127.0.0.1:$api_port
    certificate-authority: $dir/ca.crt
contexts:
- name: real
  context: {cluster: real, user: user, namespace: default}
current-context: real
users:
- name: user
  user:
    $2
EOF
}

start_etcd() {
  "$bin/etcd" --name default --data-dir "$dir/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$((etcd_port + 1))" \
    --initial-advertise-peer-urls "http://127.0.0.1:$((etcd_port + 1))" \
    --initial-cluster "default=http://127.0.0.1:$((etcd_port + 1))" \
    --watch-progress-notify-interval 5s --quota-backend-bytes 8589934592 \
    >>"$dir/etcd.log" 2>&1 &
  echo $! >"$dir/etcd.pid"
  wait_until "etcd" curl -sf "http://127.0.0.1:$etcd_port/health"
}

# --endpoint-reconciler-type=none: the default reconciler refuses a loopback advertise address.
start_apiserver() {
  "$bin/kube-apiserver" --etcd-servers "http://127.0.0.1:$etcd_port" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$api_port" \
    --tls-cert-file "$dir/apiserver.crt" --tls-private-key-file "$dir/apiserver.key" \
    --client-ca-file "$dir/ca.crt" --token-auth-file "$dir/tokens.csv" \
    --authorization-mode RBAC \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$dir/sa.pub" --service-account-signing-key-file "$dir/sa.key" \
    --service-cluster-ip-range 10.0.0.0/24 --endpoint-reconciler-type none \
    >>"$dir/kube-apiserver.log" 2>&1 &
  echo $! >"$dir/kube-apiserver.pid"
  local token
  token=$(head -1 "$dir/tokens.csv" | cut -d, -f1)
  wait_until "kube-apiserver" curl -sf --cacert "$dir/ca.crt" -H "Authorization: Bearer $token" \
    "https://127.0.0.1:$api_port/readyz"
}

# Runs the command until it succeeds; fails after 60 s with the server's log tail.
wait_until() {
  local name=$1 start=$SECONDS
  shift
  until "$@" >/dev/null 2>&1; do
    if [ $((SECONDS - start)) -ge 60 ]; then
      say "$name not ready after 60 s; the end of its log:"
      tail -20 "$dir/$name.log" >&2
      exit 1
    fi
    sleep 0.2
  done
  say "$name ready in $((SECONDS - start)) s"
}

stop_one() {
  local pidfile="$dir/$1.pid" signal=${2:-TERM}
  [ -f "$pidfile" ] || return 0
  local pid
  pid=$(cat "$pidfile")
  rm -f "$pidfile"
  kill "-$signal" "$pid" 2>/dev/null || return 0
  for _ in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
}

compact() {
  local revision
  revision=$(curl -sf "http://127.0.0.1:$etcd_port/v3/kv/range" -d '{"key":"AA=="}' |
    sed -n 's/.*"revision":"\([0-9]*\)".*/\1/p')
  [ -n "$revision" ] || { say "etcd did not report its revision"; exit 1; }
  curl -sf "http://127.0.0.1:$etcd_port/v3/kv/compaction" -d "{\"revision\":\"$revision\",\"physical\":true}" >/dev/null
  say "etcd compacted at revision $revision"
}

case $verb in
start)
  bin=$(bash "$here/build.sh" etcd kube-apiserver)
  make_credentials
  start_etcd
  start_apiserver
  ;;
start-apiserver)
  bin=$(bash "$here/build.sh" etcd kube-apiserver)
  start_apiserver
  ;;
kill-apiserver) stop_one kube-apiserver KILL ;;
compact) compact ;;
stop)
  stop_one kube-apiserver
  stop_one etcd
  ;;
*)
  say "unknown verb $verb"
  exit 2
  ;;
esac
