-- A recipient's notifications of one type, newest first. Clients filter the notifications list by type (the mentions
-- tab above all: `types[]=mention`, in v1 and v2), and with only `notifications_account` (account_id, id) such a page
-- walked the recipient's notifications of every type to find the ones asked for: to the very end whenever fewer were
-- left than the page holds (the last page of every filtered list; every page, for someone rarely mentioned), so rows
-- read grew with all the notifications ever received. Costs one D1 row written per notification.
CREATE INDEX `notifications_type` ON `notifications` (`account_id`, `type`, `id`);
