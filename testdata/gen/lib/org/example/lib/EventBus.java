package org.example.lib;

import java.util.ArrayList;
import java.util.List;

/** Events, subscriptions (inner class) and an abstract listener type. */
public class EventBus {
    public static class Event {
        public final String topic;
        public final long timestamp;
        public final Object payload;
        public Event(String topic, long timestamp, Object payload) {
            this.topic = topic; this.timestamp = timestamp; this.payload = payload;
        }
    }

    public abstract static class Listener {
        public int received;
        public abstract void on(Event e);
    }

    public class Subscription {
        public final String topic;
        public final Listener listener;
        public boolean active = true;
        Subscription(String topic, Listener listener) { this.topic = topic; this.listener = listener; }
        public void cancel() { active = false; subscriptions.remove(this); }
    }

    private final List<Subscription> subscriptions = new ArrayList<>();
    private final List<Event> history = new ArrayList<>();

    public Subscription subscribe(String topic, Listener l) {
        Subscription s = new Subscription(topic, l);
        subscriptions.add(s);
        return s;
    }

    public void publish(Event e) {
        history.add(e);
        for (Subscription s : subscriptions) {
            if (s.active && s.topic.equals(e.topic)) {
                s.listener.on(e);
            }
        }
    }

    /** A listener that just counts, returned as an anonymous class (EventBus$1). */
    public static Listener counting() {
        return new Listener() {
            public void on(Event e) { received++; }
        };
    }
}
