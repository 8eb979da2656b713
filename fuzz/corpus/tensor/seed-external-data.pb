Bej
locationweights.binp