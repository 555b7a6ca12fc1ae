package bridge

// The wire messages of protocol.json (version ProtocolVersion), one Go struct per message and type. Every line
// on the connection is one JSON object: a message's fields plus "type" (the message name). The field set,
// JSON names, types and optionality (`omitempty` ⇔ a trailing '?' in protocol.json) are checked against
// protocol.json by TestProtocolConformance, so protocol.json stays the single definition.

// ProtocolVersion is protocol.json's "version"; hello and welcome carry it.
const ProtocolVersion = 2

// Environment variables (protocol.json "env").
const (
	// EnvAddress holds the editor's listener: unix:///abs/path.sock or tcp://127.0.0.1:PORT.
	EnvAddress = "RECONCILE_LAB_BRIDGE"
	// EnvToken holds the per-listener secret sent in hello.
	EnvToken = "RECONCILE_LAB_BRIDGE_TOKEN"
	// EnvCheckNamespace makes this process a check instance restricted to one (scratch) namespace (checks.go).
	EnvCheckNamespace = "RECONCILE_LAB_CHECK_NAMESPACE"
	// EnvCheckClusterObject names the scratch copy of a cluster-scoped primary (JSON: group, version, kind, resource,
	// name): the only object of its kind the check instance's cache sees and the only one outside its namespace it
	// may write (checks.go).
	EnvCheckClusterObject = "RECONCILE_LAB_CHECK_CLUSTER_OBJECT"
	// EnvCheckHoldAfterWrites holds every write after the i-th successful persisted one (checks.go).
	EnvCheckHoldAfterWrites = "RECONCILE_LAB_CHECK_HOLD_AFTER_WRITES"
	// EnvCheckFreezeCacheAt freezes the manager's cache at a resourceVersion until the thaw command (checks.go).
	EnvCheckFreezeCacheAt = "RECONCILE_LAB_CHECK_FREEZE_CACHE_AT"
	// EnvCheckFreezeResources limits that freeze to these resources (comma-separated "resource" or
	// "resource.group"); the cache's other informers list and watch as usual (checks.go).
	EnvCheckFreezeResources = "RECONCILE_LAB_CHECK_FREEZE_RESOURCES"
	// EnvDryRunOnly (any non-empty value) makes every write through the bridge client dryRun=All, whoever makes it
	// (a controller without bridge.Options, a Runnable), and stops a program whose manager client is not the bridge
	// client before its controllers start (dryrunonly.go). The CLI's dry-run --go sets it.
	EnvDryRunOnly = "RECONCILE_LAB_DRY_RUN_ONLY"
)

// Cause is one reason a key was added to a queue (protocol.json types.Cause).
type Cause struct {
	Kind            string `json:"kind"`
	Event           string `json:"event,omitempty"`
	Resource        string `json:"resource,omitempty"`
	ObjectKey       string `json:"objectKey,omitempty"`
	ObjectKind      string `json:"objectKind,omitempty"`
	ResourceVersion string `json:"resourceVersion,omitempty"`
	Generation      int64  `json:"generation,omitempty"`
	// DeletionRequested: an update that set metadata.deletionTimestamp (a delete of an object with finalizers).
	DeletionRequested bool   `json:"deletionRequested,omitempty"`
	Initial           bool   `json:"initial,omitempty"`
	AfterMs           int64  `json:"afterMs,omitempty"`
	Failures          int    `json:"failures,omitempty"`
	DelayMs           int64  `json:"delayMs,omitempty"`
	Action            string `json:"action,omitempty"`
	Note              string `json:"note,omitempty"`
	At                int64  `json:"at"`
}

// Cause kinds.
const (
	CauseInformer     = "informer"
	CauseOwned        = "owned"
	CauseWatch        = "watch"
	CauseRequeueAfter = "requeueAfter"
	CauseBackoff      = "backoff"
	CauseManual       = "manual"
	CauseResult       = "result"
)

// PlainCauseNote is the note of protocol.json "plainCause" (kind CauseWatch): the cause of an add now that no
// informer event dispatched. A transitions item sends it as QueueExtra.PlainCause.
const PlainCauseNote = "added outside an informer event (a channel source or the program itself)"

// Result is a reconcile.Result on the wire.
type Result struct {
	RequeueAfterMs int64 `json:"requeueAfterMs,omitempty"`
	Requeue        bool  `json:"requeue,omitempty"`
	Priority       *int  `json:"priority,omitempty"`
}

// Write is one API write made through the bridge client (protocol.json types.Write).
type Write struct {
	Verb                  string         `json:"verb"`
	Group                 string         `json:"group"`
	Version               string         `json:"version"`
	Resource              string         `json:"resource"`
	Kind                  string         `json:"kind,omitempty"`
	Namespace             string         `json:"namespace,omitempty"`
	Name                  string         `json:"name"`
	Subresource           string         `json:"subresource,omitempty"`
	ResourceVersionBefore string         `json:"resourceVersionBefore,omitempty"`
	ResourceVersionAfter  string         `json:"resourceVersionAfter,omitempty"`
	DryRun                bool           `json:"dryRun"`
	Error                 string         `json:"error,omitempty"`
	Before                map[string]any `json:"before,omitempty"`
	After                 map[string]any `json:"after,omitempty"`
	Patch                 string         `json:"patch,omitempty"`
	PatchType             string         `json:"patchType,omitempty"`
	// Selector is a deleteAllOf's label and field selectors ("" when it matches every object in its scope).
	Selector string `json:"selector,omitempty"`
	// Warnings are the server's warnings about this write (HTTP Warning headers, code 299, in order, without
	// duplicates): `unknown field "spec.x"` names a field the server dropped (a Go type ahead of its CRD).
	Warnings []string `json:"warnings,omitempty"`
	// Deleted: the write removed the last finalizer of a Terminating object, so the server deleted it (in a dry
	// run: would delete it; see deletedByWrite); ResourceVersionAfter is then the object's last resourceVersion.
	Deleted bool `json:"deleted,omitempty"`
}

// HelloMsg is the first line the Go side sends on a new connection.
type HelloMsg struct {
	Protocol          int    `json:"protocol"`
	Token             string `json:"token"`
	PID               int    `json:"pid"`
	Program           string `json:"program"`
	GoVersion         string `json:"goVersion"`
	ControllerRuntime string `json:"controllerRuntime"`
	Instance          string `json:"instance"`
}

// WelcomeMsg is the editor's reply to a good hello.
type WelcomeMsg struct {
	Protocol int  `json:"protocol"`
	Paused   bool `json:"paused"`
}

// RejectMsg is the editor's reply to a bad hello; the editor then closes the connection.
type RejectMsg struct {
	Reason string `json:"reason"`
}

// ControllerMsg announces one controller (its queue was built); re-sent after every reconnect.
type ControllerMsg struct {
	Name                    string `json:"name"`
	Group                   string `json:"group,omitempty"`
	Version                 string `json:"version,omitempty"`
	Kind                    string `json:"kind,omitempty"`
	Resource                string `json:"resource,omitempty"`
	PriorityQueue           bool   `json:"priorityQueue"`
	MaxConcurrentReconciles int    `json:"maxConcurrentReconciles,omitempty"`
	LeaderElection          bool   `json:"leaderElection,omitempty"`
	ReconciliationTimeoutMs int64  `json:"reconciliationTimeoutMs,omitempty"`
	Paused                  bool   `json:"paused"`
	// CacheNamespaces are the namespaces the manager's cache watches for the controller's kind (cache.Options
	// DefaultNamespaces, or its ByObject entry's Namespaces); absent: every namespace (or not known).
	CacheNamespaces []string `json:"cacheNamespaces,omitempty"`
	// CacheLabelSelector and CacheFieldSelector are the selectors the manager's cache lists the controller's kind
	// with where no CacheSelectors entry applies: cluster-scoped objects, and every namespace when CacheSelectors is
	// absent (DefaultLabelSelector / DefaultFieldSelector, or its ByObject entry's Label / Field); absent: none.
	CacheLabelSelector string `json:"cacheLabelSelector,omitempty"`
	CacheFieldSelector string `json:"cacheFieldSelector,omitempty"`
	// CacheSelectors are the selectors per watched namespace, when the cache watches namespaces with a config each
	// (DefaultNamespaces, or its ByObject entry's Namespaces, after controller-runtime's defaulting); namespace ""
	// is cache.AllNamespaces (every namespace not listed). Absent: CacheLabelSelector / CacheFieldSelector apply.
	CacheSelectors []CacheSelector `json:"cacheSelectors,omitempty"`
	// CacheScopeUnknown says why the bridge cannot tell what the cache holds of the controller's kind; every other
	// Cache* field is then absent and nothing is refused as outside the cache.
	CacheScopeUnknown string `json:"cacheScopeUnknown,omitempty"`
	// RequestType is the Go type of the controller's requests when it is a custom request type (not
	// reconcile.Request), e.g. "main.ClusterRequest": its keys are then the texts the bridge renders for its items
	// (typed.go), not object keys. Absent for reconcile.Request.
	RequestType string `json:"requestType,omitempty"`
	// NoSetup: the manager's client is not the bridge client (bridge.Setup was not called before ctrl.NewManager):
	// the controller's writes are not journaled, its causes come from no informer event the bridge saw, and dry-run
	// is refused.
	NoSetup bool `json:"noSetup,omitempty"`
	// Order is the controller's place in the program: 1 for the first bridge.Options (or bridge.NewQueue) call the
	// process made, 2 for the next, … — the order the program sets its controllers up. The manager starts its
	// controllers in parallel, so announcements come in any order; the editor follows the lowest place. Absent
	// when not known.
	Order int `json:"order,omitempty"`
	// Declared is how many controllers the program had set up (bridge.Options and bridge.NewQueue calls) when this
	// message was sent. A manager sets every controller up before it starts any, so once the places 1…Declared
	// were all announced, no other controller of the process is coming (one behind leader election is announced
	// only after it won). Absent when not known.
	Declared int `json:"declared,omitempty"`
	// Hints are ways the program wired this controller to the bridge that work but differ from what it says: a name
	// given to bridge.Options or bridge.Wrap that is not the controller's, a Wrap paired with this queue by elimination
	// (or unpaired again). Each is a sentence ending with the fix. The editor says each once; the program's log has
	// them too. A re-announcement repeats the earlier hints and may add one.
	Hints []string `json:"hints,omitempty"`
}

// CacheSelector is the label and field selector the manager's cache lists a controller's kind with in one
// namespace ("" when none).
type CacheSelector struct {
	Namespace string `json:"namespace"`
	Label     string `json:"label,omitempty"`
	Field     string `json:"field,omitempty"`
}

// QueueMsg is one per-key transition of a controller's queue: the decoded form of one TransitionsMsg item (the Go
// side sends transitions in frames, see TransitionsMsg; TransitionDecoder expands them).
type QueueMsg struct {
	Controller string  `json:"controller"`
	Key        string  `json:"key"`
	Transition string  `json:"transition"`
	Priority   *int    `json:"priority,omitempty"`
	DueAt      int64   `json:"dueAt,omitempty"`
	DelayMs    int64   `json:"delayMs,omitempty"`
	Failures   int     `json:"failures,omitempty"`
	Causes     []Cause `json:"causes,omitempty"`
	At         int64   `json:"at"`
}

// Queue transitions.
const (
	TransitionAdded      = "added"
	TransitionWaiting    = "waiting"
	TransitionReady      = "ready"
	TransitionProcessing = "processing"
	TransitionDone       = "done"
	TransitionForgotten  = "forgotten"
	TransitionBackoff    = "backoff"
	TransitionShutdown   = "shutdown"
)

// TransitionsMsg is a run of consecutive per-key transitions of one controller's queue, in order (protocol.json
// messages.transitions). Keys are interned per connection: Keys defines ids ([id, key] pairs, id ≥ 1) before
// Items use them; id 0 is "no key". Each item is [transition index (TransitionNames), key id, at − T0,
// priority (int, or nil when the transition has none), *QueueExtra], the trailing elements omitted when absent.
// The writer builds frames with the hand-written encoder (appendFrame); this struct is the encoding/json form
// it matches byte for byte (TestFrameEncoderMatchesEncodingJSON) and the protocol conformance test's.
type TransitionsMsg struct {
	Controller string `json:"controller"`
	KeysReset  bool   `json:"keysReset,omitempty"`
	Keys       []any  `json:"keys,omitempty"`
	T0         int64  `json:"t0"`
	Items      []any  `json:"items"`
}

// QueueExtra holds the optional fields of one TransitionsMsg item (protocol.json types.QueueExtra).
type QueueExtra struct {
	DueAt    int64   `json:"dueAt,omitempty"`
	DelayMs  int64   `json:"delayMs,omitempty"`
	Failures int     `json:"failures,omitempty"`
	Causes   []Cause `json:"causes,omitempty"`
	// PlainCause stands for Causes = [plainCause(the item's at)] (never set together with Causes).
	PlainCause bool `json:"plainCause,omitempty"`
}

// TransitionNames is protocol.json "transitions": a transition's index is its code in a TransitionsMsg item.
var TransitionNames = [...]string{TransitionAdded, TransitionWaiting, TransitionReady, TransitionProcessing,
	TransitionDone, TransitionForgotten, TransitionBackoff, TransitionShutdown}

// ReconcileStartMsg is sent when the wrapped reconciler starts one reconcile.
type ReconcileStartMsg struct {
	Controller  string  `json:"controller"`
	Key         string  `json:"key"`
	ReconcileID string  `json:"reconcileID"`
	Triggers    []Cause `json:"triggers"`
	DryRun      bool    `json:"dryRun"`
	At          int64   `json:"at"`
}

// ReconcileEndMsg is sent when that reconcile returned (or panicked).
type ReconcileEndMsg struct {
	Controller  string  `json:"controller"`
	Key         string  `json:"key"`
	ReconcileID string  `json:"reconcileID"`
	DurationMs  int64   `json:"durationMs"`
	Result      *Result `json:"result,omitempty"`
	Error       string  `json:"error,omitempty"`
	Terminal    bool    `json:"terminal,omitempty"`
	Panic       string  `json:"panic,omitempty"`
	DryRun      bool    `json:"dryRun"`
	At          int64   `json:"at"`
}

// WriteMsg journals one API write; during a reconcile it carries that reconcile's controller, key and ID.
type WriteMsg struct {
	Controller  string `json:"controller,omitempty"`
	Key         string `json:"key,omitempty"`
	ReconcileID string `json:"reconcileID,omitempty"`
	Write       Write  `json:"write"`
	At          int64  `json:"at"`
}

// InformersMsg lists every resource the program's cache has an informer for (plural.version.group, sorted); sent
// when a new one is handed out and again after a reconnect.
type InformersMsg struct {
	Resources []string `json:"resources"`
}

// PingMsg is sent every second while the process runs.
type PingMsg struct {
	At int64 `json:"at"`
}

// CommandMsg is an editor request; exactly one ReplyMsg answers it.
type CommandMsg struct {
	ID         int64  `json:"id"`
	Op         string `json:"op"`
	Controller string `json:"controller"`
	Key        string `json:"key,omitempty"`
	Force      bool   `json:"force,omitempty"`
	Resource   string `json:"resource,omitempty"`
}

// Command ops.
const (
	OpPause        = "pause"
	OpResume       = "resume"
	OpStep         = "step"
	OpResetBackoff = "resetBackoff"
	OpReconcileNow = "reconcileNow"
	OpDryRun       = "dryRun"
	OpSnapshot     = "snapshot"
	OpThaw         = "thaw"
	OpWithhold     = "withhold"
	OpRelease      = "release"
	OpCacheGet     = "cacheGet"
)

// ReplyMsg answers one command (same ID).
type ReplyMsg struct {
	ID        int64            `json:"id"`
	OK        bool             `json:"ok"`
	Error     string           `json:"error,omitempty"`
	Reconcile *ReconcileEndMsg `json:"reconcile,omitempty"`
	Writes    []Write          `json:"writes,omitempty"`
	Snapshot  map[string]any   `json:"snapshot,omitempty"`
	Withheld  int              `json:"withheld,omitempty"`
	// Object is cacheGet's answer: the cached object, with apiVersion and kind (nil: not in the cache).
	Object map[string]any `json:"object,omitempty"`
	// MetadataOnly: Object came from a metadata-only informer (apiVersion, kind and metadata only).
	MetadataOnly bool `json:"metadataOnly,omitempty"`
}

// messageTypes maps each message name of protocol.json to its Go struct (used by the codec and the
// conformance test).
var messageTypes = map[string]any{
	"hello":          HelloMsg{},
	"welcome":        WelcomeMsg{},
	"reject":         RejectMsg{},
	"controller":     ControllerMsg{},
	"queue":          QueueMsg{},
	"transitions":    TransitionsMsg{},
	"reconcileStart": ReconcileStartMsg{},
	"reconcileEnd":   ReconcileEndMsg{},
	"write":          WriteMsg{},
	"ping":           PingMsg{},
	"informers":      InformersMsg{},
	"command":        CommandMsg{},
	"reply":          ReplyMsg{},
}

// typeNames maps each protocol.json type to its Go struct.
var typeNames = map[string]any{
	"Cause":         Cause{},
	"Result":        Result{},
	"Write":         Write{},
	"QueueExtra":    QueueExtra{},
	"CacheSelector": CacheSelector{},
}

// messageName returns the protocol name of a message value (a pointer or value of one of the *Msg structs).
func messageName(m any) string {
	switch m.(type) {
	case *HelloMsg, HelloMsg:
		return "hello"
	case *WelcomeMsg, WelcomeMsg:
		return "welcome"
	case *RejectMsg, RejectMsg:
		return "reject"
	case *ControllerMsg, ControllerMsg:
		return "controller"
	case *QueueMsg, QueueMsg:
		return "queue"
	case *TransitionsMsg, TransitionsMsg:
		return "transitions"
	case *ReconcileStartMsg, ReconcileStartMsg:
		return "reconcileStart"
	case *ReconcileEndMsg, ReconcileEndMsg:
		return "reconcileEnd"
	case *WriteMsg, WriteMsg:
		return "write"
	case *PingMsg, PingMsg:
		return "ping"
	case *InformersMsg, InformersMsg:
		return "informers"
	case *CommandMsg, CommandMsg:
		return "command"
	case *ReplyMsg, ReplyMsg:
		return "reply"
	}
	return ""
}
