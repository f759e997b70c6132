// Command franz reads one topic from the earliest offset to the end offsets it had at the
// start, with franz-go's direct (group-less) consumer and its default fetch settings, and
// discards the records. One of the clients of benches/e2e.
//
//	franz <bootstrap> <topic>
//
// Prints one line: records, key+value bytes, wall seconds.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: franz <bootstrap> <topic>")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "franz:", err)
		os.Exit(1)
	}
}

func run(bootstrap, topic string) error {
	started := time.Now()
	ctx := context.Background()

	admin, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		return err
	}
	ends, err := kadm.NewClient(admin).ListEndOffsets(ctx, topic)
	admin.Close()
	if err != nil {
		return err
	}
	if err := ends.Error(); err != nil {
		return err
	}
	// The offset each partition must reach; partitions that are empty need nothing.
	want := map[int32]int64{}
	starts := map[int32]kgo.Offset{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			want[o.Partition] = o.Offset
			starts[o.Partition] = kgo.NewOffset().AtStart()
		}
	})
	if len(want) == 0 {
		fmt.Printf("records 0 bytes 0 seconds %.3f\n", time.Since(started).Seconds())
		return nil
	}

	client, err := kgo.NewClient(
		kgo.SeedBrokers(bootstrap),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: starts}),
	)
	if err != nil {
		return err
	}
	defer client.Close()

	var records, bytes int64
	for len(want) > 0 {
		fetches := client.PollFetches(ctx)
		if errs := fetches.Errors(); len(errs) > 0 {
			return fmt.Errorf("%s[%d]: %w", errs[0].Topic, errs[0].Partition, errs[0].Err)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			records++
			bytes += int64(len(r.Key) + len(r.Value))
			if end, ok := want[r.Partition]; ok && r.Offset+1 >= end {
				delete(want, r.Partition)
			}
		})
	}
	fmt.Printf("records %d bytes %d seconds %.3f\n", records, bytes, time.Since(started).Seconds())
	return nil
}
