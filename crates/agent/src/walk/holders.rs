//! The objects a walk follows outwards and keeps linked from walk to walk (tagged with a
//! link slot): containers of big arrays, watched objects, and what holds them. The walk's
//! callbacks (the parent module) report references; this module decides what to link and
//! names the chains.

use rustc_hash::FxHashMap;

use super::common::{EdgeKey, STATICS};
use crate::classes::link_of;
use crate::jvmti::{Jint, Jlong};

/// An array at least this big makes the object that references it a container worth naming.
pub(super) const BIG_ARRAY: i64 = 64 * 1024;
/// An object array this big may make a container too, when it is among the biggest: a leak
/// starts small, and its structure must be learned while walks are cheap (a listener list of
/// 11,000 entries, the biggest object array of a Tomcat heap, held 46 KB).
const SMALLEST_BIG_OBJECT_ARRAY: u32 = 12;
/// How many object arrays, at most, are big enough to make containers after a walk: the
/// threshold of the next walk is the smallest power of two that keeps this many or fewer.
const BIG_OBJECT_ARRAYS: u64 = 64;
/// Histogram buckets of object array sizes (log2 of bytes).
pub(super) const SIZE_BUCKETS: usize = 40;
/// Objects tagged as containers, at most.
pub(super) const MAX_CONTAINERS: usize = 512;
/// Objects linked (tagged for a path: containers, watched objects, what holds them), at most.
pub(super) const MAX_LINKS: usize = 131_072;
/// Links kept for containers and their holders, whatever the watched objects and path links
/// take: watched sessions (tagged at birth by their constructors' hook) and their map nodes
/// filled every link in a registry's first walk, and the registry's own chain, the leak's
/// holder, was never learned.
pub(super) const RESERVED_FOR_CONTAINERS: usize = 16_384;
/// How many references from a container or watched class a class may be and still have its
/// objects linked when first reached; and how far holders are learned one level per walk.
pub(super) const MAX_LEVEL: u32 = 8;
/// The longest path named, in holders.
pub(super) const MAX_PATH: usize = 16;
/// Objects the path classes may have together, and each (by the last walk's counts): the
/// classes nearest a container or watched class come first, the ones with fewer objects first
/// among equally near, so that the few objects on a path to a container (a manager, a
/// context, a registry, a map's table) are linked, not every map node of the JVM: a real
/// server's class graph puts most classes within a few references of some container.
pub(super) const PATH_OBJECTS: u64 = 24_576;
pub(super) const PATH_CLASS_OBJECTS: u64 = 8_192;
/// Path links alive at once, and added per walk, at most: the bound on what linking costs
/// the JVM's pause. A walk on a forked copy pauses nothing and keeps no link for the next one,
/// so it may add as many as may be alive (see [`Holders::begin_forked`]).
pub(super) const MAX_PATH_LINKS: usize = 32_768;
pub(super) const PATH_LINKS_PER_WALK: usize = 8_192;

/// What holds a linked object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Held {
    /// A static field of a class.
    Statics(u32),
    /// An instance of a class; its link, when it has one reached before this object.
    Instance(u32, Option<u32>),
    /// A GC root of a JVMTI reference kind.
    Root(u32),
}

impl Held {
    /// A stack or JNI local: the thread using the object now, not what keeps it. It ends a
    /// path only until a walk finds a referrer.
    pub(super) fn transient(self) -> bool {
        matches!(self, Held::Root(24 | 25))
    }

    /// Lower is more telling: a static field says most about who keeps an object; transient
    /// roots (stack and JNI locals of the thread using it) least.
    pub(super) fn rank(self) -> u8 {
        match self {
            Held::Statics(_) => 0,
            Held::Instance(_, Some(_)) => 1,
            Held::Root(26) => 2,
            Held::Instance(_, None) => 3,
            Held::Root(_) => 4,
        }
    }
}

/// Why an object is linked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// It holds a big array.
    Container,
    /// It is watched (`--watch`); its access slot.
    Watched(u32),
    /// It holds a container or a watched object, `level` references away.
    Holder,
    /// Its class lies on a path of the class graph to a container or watched class, so it was
    /// linked when first reached; it becomes a holder if a path goes through it, else it is
    /// dropped after the walk.
    Path,
}

#[derive(Debug, Clone)]
pub(super) struct Link {
    pub(super) kind: Kind,
    /// A watched object or a holder learned from one: counts against the links left after
    /// the containers' reserve and the path links' (100,000 watched sessions and their map
    /// nodes took every link, and the map's table, shared by all of them, got none).
    pub(super) limited: bool,
    pub(super) class: u32,
    pub(super) level: u32,
    pub(super) array_class: u32,
    pub(super) array_bytes: u64,
    /// A container's: the link of its big array in the last walk.
    pub(super) array_link: Option<u32>,
    /// It is a container's big array (its elements' classes are counted).
    pub(super) is_array: bool,
    /// The walk that last saw its big array.
    pub(super) seen_in: u64,
    /// When the walk that last reached it first did (`Holders::order`).
    pub(super) reached: u64,
    /// The most telling referrer the last walk reported.
    pub(super) held: Option<Held>,
    /// JVMTI's index of the reference `held` names: the referrer's field (as JVMTI numbers
    /// a class's fields) or the array element; -1 for a root or where not known.
    pub(super) held_index: Jint,
    /// A container's: JVMTI's index of its field that holds the big array, -1 if not known.
    pub(super) array_index: Jint,
    /// Dropped: its object's tag is cleared when next reached.
    pub(super) retired: bool,
    /// Its object's tag is cleared or the object is gone (`ObjectFree`): the slot can be reused.
    pub(super) slot_free: bool,
    /// The tag its object carries with the link (for finding the object again, through
    /// `GetObjectsWithTags`, after the walk).
    pub(super) tag: Jlong,
    /// Numbers links in the order they were made, never reused: a container's identity across
    /// walks and readings.
    pub(super) serial: u64,
}

impl Link {
    pub(super) fn new(kind: Kind, limited: bool, class: u32, reached: u64) -> Link {
        Link {
            kind,
            limited,
            class,
            level: 0,
            array_class: 0,
            array_bytes: 0,
            array_link: None,
            is_array: false,
            seen_in: 0,
            reached,
            held: None,
            held_index: -1,
            array_index: -1,
            retired: false,
            slot_free: false,
            tag: 0,
            serial: 0,
        }
    }
}

/// Objects a walk follows outwards, tagged with their link slot and kept across walks:
/// containers (holders of a big array), watched objects, and what holds them.
///
/// A referrer is reported after the references *to* it (it is visited after being reached),
/// so an object tagged only when it refers to a linked one misses its own referrers in that
/// walk: chains learned that way grow one level per walk. So each walk also links, when first
/// reached, the objects of the classes that the previous walk's class graph puts within
/// [`MAX_LEVEL`] references of a container or watched class (`path_classes`, the classes with
/// few objects first); since every object is reached before it is visited, such an object's
/// referrer is linked before it, and the whole path from a root is named in one walk. Path
/// links stay while their class is a path class and walks reach them; the others no path
/// goes through are dropped after the walk.
#[derive(Debug, Default)]
pub struct Holders {
    pub(super) links: Vec<Link>,
    /// Slots of dropped links whose objects are cleared or gone. A dropped link whose object a
    /// walk does not reach (kept only by a `Reference`, or dead but not yet collected) keeps
    /// its slot until `ObjectFree` reports the object.
    pub(super) free: Vec<u32>,
    pub(super) containers: usize,
    pub(super) limited: usize,
    /// Live links of kind `Path`.
    pub(super) paths: usize,
    pub(super) walks: u64,
    /// Counts first reaches; a walk's start takes one, so every link it reaches has a later one.
    pub(super) order: u64,
    pub(super) walk_start: u64,
    /// Per class id: whether its objects are linked when first reached.
    pub(super) path_classes: Vec<bool>,
    pub(super) path_added: usize,
    /// Links made so far (the next link's serial).
    pub(super) made: u64,
    /// `walk_start` of the last full walk: the watched objects reached since are the live ones
    /// (walks filtered by class reach only some).
    pub(super) full_start: u64,
    /// The classes of the elements of containers' big arrays this walk: (array link, class id)
    /// → elements.
    pub(super) elements: FxHashMap<(u32, u32), u64>,
    /// Log2 of the bytes an object array needs to make its referrer a container (the
    /// biggest ones of the last walk; see [`SMALLEST_BIG_OBJECT_ARRAY`]); 0 before a walk.
    pub(super) big_object_array: u32,
    /// Path links this walk may add: [`PATH_LINKS_PER_WALK`], or [`MAX_PATH_LINKS`] on a
    /// forked copy.
    pub(super) path_links_per_walk: usize,
    /// What the whole walk under way cleared, to put back if it stops (see [`Self::stopped_walk`]).
    before: Option<BeforeWalk>,
}

/// What the last complete walk learned that a whole walk clears at its start: each link's
/// holder (with its serial, so that a slot taken by a new link is not given an old holder),
/// which walk last saw it as a container, the containers' elements, and where the last
/// complete walk started.
#[derive(Debug)]
struct BeforeWalk {
    links: Vec<(u64, Option<Held>, Jint, u64)>,
    walks: u64,
    full_start: u64,
    elements: FxHashMap<(u32, u32), u64>,
}

/// What a walk decided of the next walk's links, to carry from a walk on a forked copy (whose
/// links stay in the copy) to the JVM's own state: which classes' objects are linked when first
/// reached, how big an object array makes a container, and the serials used.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct LinkPlan {
    path_classes: Vec<bool>,
    big_object_array: u32,
    made: u64,
}

impl Holders {
    /// The plan this state's last walk made for the next one.
    pub fn link_plan(&self) -> LinkPlan {
        LinkPlan { path_classes: self.path_classes.clone(), big_object_array: self.big_object_array, made: self.made }
    }

    /// Takes the plan a walk on a forked copy made: the next walk, forked or not, links the
    /// path classes it planned, and no serial it gave is given again (its containers are
    /// numbered apart from this state's).
    pub fn adopt(&mut self, plan: LinkPlan) {
        self.path_classes = plan.path_classes;
        self.big_object_array = plan.big_object_array;
        self.made = self.made.max(plan.made);
    }

    pub(super) fn add(&mut self, link: Link) -> Option<u32> {
        let container = link.kind == Kind::Container;
        let path = link.kind == Kind::Path;
        let used = self.links.len() - self.free.len();
        if used >= MAX_LINKS
            || (link.limited && self.limited >= MAX_LINKS - RESERVED_FOR_CONTAINERS - MAX_PATH_LINKS)
            || (container && self.containers >= MAX_CONTAINERS)
            || (path && self.paths >= MAX_PATH_LINKS)
        {
            return None;
        }
        self.containers += usize::from(container);
        self.limited += usize::from(link.limited);
        self.paths += usize::from(path);
        self.made += 1;
        let link = Link { serial: self.made, ..link };
        Some(match self.free.pop() {
            Some(slot) => {
                self.links[slot as usize] = link;
                slot
            }
            None => {
                self.links.push(link);
                self.links.len() as u32 - 1
            }
        })
    }

    /// The bytes an array must have to make the object that references it a container.
    pub(super) fn big_array(&self, object_array: bool) -> i64 {
        if object_array {
            1 << self.big_object_array.max(SMALLEST_BIG_OBJECT_ARRAY)
        } else {
            BIG_ARRAY
        }
    }

    /// Sets the next walk's threshold for object arrays from this walk's `sizes` (how many
    /// object arrays fields referenced, by log2 of their bytes): the smallest power of two at
    /// or above [`SMALLEST_BIG_OBJECT_ARRAY`] that [`BIG_OBJECT_ARRAYS`] or fewer reach, and
    /// never above [`BIG_ARRAY`].
    pub(super) fn plan_containers(&mut self, sizes: &[u64; SIZE_BUCKETS]) {
        let big = BIG_ARRAY.ilog2();
        self.big_object_array = (SMALLEST_BIG_OBJECT_ARRAY..big)
            .find(|&b| sizes[b as usize..].iter().sum::<u64>() <= BIG_OBJECT_ARRAYS)
            .unwrap_or(big);
    }

    /// The tag of an object tagged `old` that takes link `slot`, noted in the link.
    pub(super) fn tag_link(&mut self, slot: u32, old: Jlong) -> Jlong {
        let tag = crate::classes::with_link(old, slot).unwrap_or(old);
        if let Some(l) = self.links.get_mut(slot as usize) {
            l.tag = tag;
        }
        tag
    }

    /// A live link's slot in `tag`.
    pub(super) fn live(&self, tag: Jlong) -> Option<u32> {
        link_of(tag).filter(|&s| self.links.get(s as usize).is_some_and(|l| !l.retired))
    }

    /// Takes back the slots of linked objects the collector freed (their tags, as
    /// `ObjectFree` reported them).
    pub fn freed(&mut self, tags: &[Jlong]) {
        let mut released = false;
        for &tag in tags {
            if let Some(slot) = link_of(tag) {
                self.release(slot);
                released = true;
            }
        }
        if released {
            self.unlink_released();
        }
    }

    /// What a released link held is held by its class alone from now on, and a container
    /// whose array's link was released has none: the slot goes to the next link made, and a
    /// path through it would run on through another object. A listener list's array, replaced
    /// at every addition, was freed and its slot taken by a map node of
    /// `ZoneRulesProvider`'s: every watched cart was then "held" by that class's statics.
    fn unlink_released(&mut self) {
        let released = |links: &[Link], n: u32| links.get(n as usize).is_none_or(|l| l.slot_free);
        for i in 0..self.links.len() {
            if let Some(Held::Instance(class, Some(n))) = self.links[i].held {
                if released(&self.links, n) {
                    self.links[i].held = Some(Held::Instance(class, None));
                }
            }
            if self.links[i].array_link.is_some_and(|a| released(&self.links, a)) {
                self.links[i].array_link = None;
            }
        }
    }

    /// Drops link `slot` and frees it: its object no longer carries it.
    pub(super) fn release(&mut self, slot: u32) {
        self.retire(slot);
        if let Some(l) = self.links.get_mut(slot as usize).filter(|l| !l.slot_free) {
            l.slot_free = true;
            self.free.push(slot);
        }
    }

    /// Drops link `slot`; its object's tag still names it.
    pub(super) fn retire(&mut self, slot: u32) {
        if let Some(l) = self.links.get_mut(slot as usize).filter(|l| !l.retired) {
            l.retired = true;
            l.held = None;
            self.containers -= usize::from(l.kind == Kind::Container);
            self.limited -= usize::from(l.limited);
            self.paths -= usize::from(l.kind == Kind::Path);
        }
    }

    /// Before a whole walk: it learns every link's holder and every container's elements
    /// anew, so it clears them, keeping what they were in case it stops.
    pub(super) fn begin_walk(&mut self) {
        self.before = Some(BeforeWalk {
            links: self.links.iter().map(|l| (l.serial, l.held, l.held_index, l.seen_in)).collect(),
            walks: self.walks,
            full_start: self.full_start,
            elements: std::mem::take(&mut self.elements),
        });
        self.walks += 1;
        self.order += 1;
        self.walk_start = self.order;
        self.full_start = self.order;
        for l in &mut self.links {
            l.held = None;
        }
        self.path_added = 0;
    }

    /// After a whole walk stopped at its deadline: what it cleared is put back, so that the
    /// chains, elements and watched objects are the last complete walk's, with whatever the
    /// stopped walk learned beside them (holders of links that had none, containers it
    /// reached). On a heap too big to walk whole, every whole walk tried stops: a Tomcat
    /// shop's listener list, named by the complete walks of its first seconds, was unnamed
    /// from the first stopped walk on, since the walks filtered by class after it reported
    /// only the containers the stopped walk had reached, each held by nothing known.
    pub(super) fn stopped_walk(&mut self) {
        let Some(before) = self.before.take() else { return };
        for (l, &(serial, held, index, seen_in)) in self.links.iter_mut().zip(&before.links) {
            if l.retired || l.serial != serial {
                continue;
            }
            if held.is_some() {
                l.held = held;
                l.held_index = index;
            }
            if seen_in == before.walks {
                l.seen_in = self.walks;
            }
        }
        self.full_start = before.full_start;
        let mut elements = before.elements;
        for (key, n) in std::mem::take(&mut self.elements) {
            elements.entry(key).or_insert(n);
        }
        self.elements = elements;
    }

    /// Before a whole walk on a forked copy: as [`Self::begin_walk`], and every object of the
    /// path classes may be linked in this one walk. In the JVM, path links linger from walk to
    /// walk, so a big heap's are linked over several walks within [`PATH_LINKS_PER_WALK`]
    /// each; a copy's links die with it, and at that bound a Tomcat of 35 M objects never
    /// linked its listener list's holder (the bound was spent on objects reached before it).
    pub(super) fn begin_forked(&mut self) {
        self.begin_walk();
        self.path_links_per_walk = MAX_PATH_LINKS;
    }

    /// Before a walk filtered by class: what holds the links it does not report stays as the
    /// last full walk found it.
    pub(super) fn begin_filtered(&mut self) {
        self.order += 1;
        self.walk_start = self.order;
    }

    /// Notes a GC root or a static field as what holds link `slot`: where a walk filtered by
    /// class meets one, the chain ends there, whatever instance also refers to the object (a
    /// request thread's task led on into the locks that refer to the thread).
    pub(super) fn note_end(&mut self, slot: u32, held: Held, index: Jint) {
        if let Some(l) = self.links.get_mut(slot as usize) {
            if !held.transient() || l.held.is_none() {
                l.held = Some(held);
                l.held_index = index;
            }
        }
    }

    /// Notes `held` as what holds link `slot` (by the reference of JVMTI index `index`), when
    /// it says more than what the walk noted.
    pub(super) fn note_held(&mut self, slot: u32, held: Held, index: Jint) {
        if let Some(l) = self.links.get_mut(slot as usize) {
            if l.held.is_none_or(|h| held.rank() < h.rank()) {
                l.held = Some(held);
                l.held_index = index;
            }
        }
    }

    /// Makes the referrer (class `container`, tagged `referrer_tag`) of a big array (class
    /// `array`, `bytes`, tagged `tag`) a container, linking it if it is not yet, and links the
    /// array as held by it: a watched object's chain that reaches the array goes on through
    /// the container's (a listener in a list's array: the array has too many neighbours of its
    /// class to be a path class, and the chain stopped there).
    pub(super) fn contain(
        &mut self,
        container: u32,
        array: u32,
        bytes: u64,
        index: Jint,
        referrer_tag: &mut Jlong,
        tag: &mut Jlong,
    ) {
        let slot = match self.live(*referrer_tag) {
            Some(slot) => slot,
            None if crate::classes::with_link(*referrer_tag, 0).is_some() => {
                let Some(slot) = self.add(Link::new(Kind::Container, false, container, self.walk_start)) else {
                    return;
                };
                *referrer_tag = self.tag_link(slot, *referrer_tag);
                slot
            }
            None => return,
        };
        let (containers, walks) = (self.containers, self.walks);
        let Some(l) = self.links.get_mut(slot as usize) else { return };
        match l.kind {
            Kind::Watched(_) => return,
            Kind::Holder | Kind::Path if containers >= MAX_CONTAINERS => return,
            Kind::Holder | Kind::Path => {
                l.kind = Kind::Container;
                l.level = 0;
                self.containers += 1;
            }
            Kind::Container => {}
        }
        l.array_bytes = bytes;
        l.array_class = array;
        l.array_index = index;
        l.seen_in = walks;
        let array_link = match self.live(*tag) {
            // Linked already, as a path class's object or from an earlier walk.
            Some(a) => {
                self.links[a as usize].is_array = true;
                Some(a)
            }
            None if crate::classes::with_link(*tag, 0).is_some() => {
                self.order += 1;
                let mut link = Link::new(Kind::Holder, false, array, self.order);
                link.level = 1;
                link.is_array = true;
                link.held = Some(Held::Instance(container, Some(slot)));
                link.held_index = index;
                let a = self.add(link);
                if let Some(a) = a {
                    *tag = self.tag_link(a, *tag);
                }
                a
            }
            None => None,
        };
        if let Some(l) = self.links.get_mut(slot as usize) {
            l.array_link = array_link;
        }
    }

    /// Marks link `slot` reached, if this walk had not reached it yet.
    pub(super) fn reach(&mut self, slot: u32) {
        if let Some(l) = self.links.get_mut(slot as usize) {
            if l.reached < self.walk_start {
                self.order += 1;
                l.reached = self.order;
            }
        }
    }

    /// A link for an untagged (or sampled) object of a path class reached for the first time.
    pub(super) fn path_link(&mut self, class: u32) -> Option<u32> {
        let per_walk = if self.path_links_per_walk == 0 { PATH_LINKS_PER_WALK } else { self.path_links_per_walk };
        if !self.path_classes.get(class as usize).copied().unwrap_or(false) || self.path_added >= per_walk {
            return None;
        }
        self.order += 1;
        let slot = self.add(Link::new(Kind::Path, false, class, self.order))?;
        self.path_added += 1;
        Some(slot)
    }

    /// After a complete walk: keeps the links on the paths of the containers it saw and of
    /// the watched objects (their path links become holders), plans the next walk's path
    /// classes from this walk's class graph and object counts (`objects`, by class id), and
    /// drops the other links, except path links the walk reached whose class is still a path
    /// class: they stay linked, so that a steady heap is not linked again in every walk.
    pub(super) fn finish_walk(
        &mut self,
        edges: &FxHashMap<EdgeKey, (u64, u64)>,
        objects: &[u64],
        watched_classes: &[bool],
    ) {
        self.before = None;
        let mut keep = vec![false; self.links.len()];
        for i in 0..self.links.len() {
            let l = &self.links[i];
            let target = !l.retired
                && match l.kind {
                    Kind::Container => l.seen_in == self.walks,
                    Kind::Watched(_) => true,
                    Kind::Holder | Kind::Path => false,
                };
            if !target {
                continue;
            }
            keep[i] = true;
            let mut cur = i;
            for level in 1..=MAX_PATH as u32 {
                let Some(Held::Instance(_, Some(next))) = self.links[cur].held else { break };
                let next = next as usize;
                let l = &mut self.links[next];
                if l.kind == Kind::Path {
                    l.kind = Kind::Holder;
                    l.level = level;
                    self.paths -= 1;
                } else if l.kind == Kind::Holder {
                    l.level = l.level.min(level);
                }
                if keep[next] {
                    break;
                }
                keep[next] = true;
                cur = next;
            }
        }
        self.path_classes = self.plan_paths(edges, objects, watched_classes);
        for (i, kept) in keep.into_iter().enumerate() {
            let l = &self.links[i];
            let linger = l.kind == Kind::Path
                && l.reached >= self.walk_start
                && self.path_classes.get(l.class as usize).copied().unwrap_or(false);
            if !kept && !linger && !matches!(l.kind, Kind::Watched(_)) {
                self.retire(i as u32);
            }
        }
    }

    /// The path classes: those within [`MAX_LEVEL`] references of a container's or a watched
    /// object's class in the class graph `edges` (referrer → referent, statics excluded), the
    /// nearest first and, among equally near, the ones with fewer objects, while they have
    /// [`PATH_OBJECTS`] together and [`PATH_CLASS_OBJECTS`] each. Watched classes are not
    /// among them (the watch links their objects).
    pub(super) fn plan_paths(
        &self,
        edges: &FxHashMap<EdgeKey, (u64, u64)>,
        objects: &[u64],
        watched_classes: &[bool],
    ) -> Vec<bool> {
        let mut referrers: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
        for &(from, to) in edges.keys() {
            if from & STATICS == 0 {
                referrers.entry(to).or_default().push(from as u32);
            }
        }
        let watched = |c: u32| watched_classes.get(c as usize).copied().unwrap_or(false);
        let mut frontier: Vec<u32> = (0..watched_classes.len() as u32).filter(|&c| watched(c)).collect();
        frontier.extend(self.links.iter().filter(|l| !l.retired && l.kind == Kind::Container).map(|l| l.class));
        let top = referrers.keys().chain(referrers.values().flatten()).chain(&frontier).max().map_or(0, |&m| m + 1);
        let count = |c: u32| objects.get(c as usize).copied().unwrap_or(0);
        let mut reached = vec![false; top as usize];
        frontier.retain(|&c| !std::mem::replace(&mut reached[c as usize], true));
        let mut chosen = vec![false; top as usize];
        let mut total = 0;
        for _ in 0..=MAX_LEVEL {
            let mut level = frontier.clone();
            level.sort_by_key(|&c| (count(c), c));
            for c in level.into_iter().filter(|&c| !watched(c)) {
                if count(c) <= PATH_CLASS_OBJECTS && total + count(c) <= PATH_OBJECTS {
                    total += count(c);
                    chosen[c as usize] = true;
                }
            }
            let mut next = Vec::new();
            for c in frontier {
                for &f in referrers.get(&c).into_iter().flatten() {
                    if !std::mem::replace(&mut reached[f as usize], true) {
                        next.push(f);
                    }
                }
            }
            frontier = next;
        }
        chosen
    }

    /// Whether the holders of link `from`, outwards as far as a path is named, include link
    /// `to`: holding `to` by `from` would then be a cycle, not a way out.
    pub(super) fn leads_to(&self, from: u32, to: u32) -> bool {
        let mut cur = from;
        for _ in 0..=MAX_PATH {
            if cur == to {
                return true;
            }
            match self.links.get(cur as usize).and_then(|l| l.held) {
                Some(Held::Instance(_, Some(next))) => cur = next,
                _ => return false,
            }
        }
        false
    }

    /// Links in use, and how many of them the last walk added for paths (for tests and notes).
    pub fn counts(&self) -> (usize, usize) {
        (self.links.iter().filter(|l| !l.retired).count(), self.path_added)
    }
}
