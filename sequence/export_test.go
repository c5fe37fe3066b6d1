package sequence

// QueuedKeys returns how many keys q has a queue for.
func QueuedKeys(q *Queued) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.keys)
}
