-- Preview-card images cached in R2 (issue 32 point 3; src/services/remote-media/card-images.ts): the copy's key, NULL while
-- the card shows its remote image (not fetched yet, could not be, or the image changed on a refetch).
ALTER TABLE `preview_cards` ADD `image_key` text;
